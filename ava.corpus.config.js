// The corpus lane (`pnpm test:corpus`): tests over corpora fetched from outside the repository.
// The Debian PDF corpus comes from `apt-get download` (scripts/fetch-pdf-corpus.sh), so this lane
// needs apt and a Debian mirror; `pnpm test` needs neither.
import { lane } from './ava.lane.js';

export default lane({ files: ['packages/server/test/pdf-corpus-debian.test.ts'], timeout: '5m' });
