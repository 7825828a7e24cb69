// The corpus lane (`pnpm test:corpus`): tests over corpora from outside the repository, so that
// `pnpm test` passes on a clone of the repository alone. The malformed PDFs come from
// ../shared/corpus/tricky-pdfs (or TRICKY_PDF_DIR); the Debian PDF corpus comes from
// `apt-get download` (scripts/fetch-pdf-corpus.sh), so this lane needs apt and a Debian mirror.
import { lane } from './ava.lane.js';

export default lane({
  files: ['packages/server/test/pdf-corpus-shared.test.ts', 'packages/server/test/pdf-corpus-debian.test.ts'],
  timeout: '5m',
});
