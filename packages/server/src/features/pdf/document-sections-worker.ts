import { type SectionedText, sectionTextDocument, type TextDocumentFormat } from './section-document.ts';

export interface DocumentSectionsTask {
  /** The document's UTF-8 bytes, moved to this thread. */
  bytes: ArrayBuffer;
  format: TextDocumentFormat;
  maxChars: number;
}

/** A large text document's sections, made in a worker thread (document-sections-pool.ts). */
export default function sectionDocument(task: DocumentSectionsTask): Promise<SectionedText> {
  return sectionTextDocument(Buffer.from(task.bytes).toString('utf8'), task.format, task.maxChars);
}
