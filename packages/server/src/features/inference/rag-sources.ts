import { BlackboardGetRequest, type RagBody } from '@svc/schemas';
import type { RequestContext } from '../../http/request-context.ts';
import { isServiceError, ServiceError } from '../../service-error.ts';
import type { RagDocument } from '../../inference/provider.ts';
import type { BlackboardService } from '../blackboard/index.ts';
import type { CatalogService } from '../catalog/index.ts';

/** What RAG may read besides the documents in the request. */
export interface RagSourceReaders {
  blackboard: Pick<BlackboardService, 'get'>;
  catalog: Pick<CatalogService, 'summary'>;
}

/** Posts read from a named channel: the newest page, as the board serves it to anyone. */
const CHANNEL_POSTS = 200;

/**
 * The documents a RAG call answers from, indexed as the citations will name them: the request's
 * documents first, in order, then a named channel's current posts, then the named artifacts'
 * descriptions. A source that does not exist is a 422 naming it, so a typo is never answered
 * from nothing.
 */
export async function gatherRagDocuments(readers: RagSourceReaders, body: RagBody, _request: RequestContext): Promise<RagDocument[]> {
  const documents: RagDocument[] = body.documents.map((document, index) =>
    typeof document === 'string' ? { index, text: document } : { index, text: document.text, ...(document.id !== undefined ? { id: document.id } : {}) },
  );
  const key = body.sources?.blackboard_key;
  if (key !== undefined) {
    const parsed = BlackboardGetRequest.safeParse({ key, limit: CHANNEL_POSTS });
    if (!parsed.success) throw new ServiceError('source_not_found', `sources.blackboard_key "${key}" is not a channel key (task:hash).`);
    const page = await readers.blackboard.get(parsed.data);
    for (const record of page.items)
      if (!record.tombstone && record.item.text) documents.push({ index: documents.length, id: `blackboard:${record.id}`, text: record.item.text });
  }
  for (const artifactId of body.sources?.artifact_ids ?? []) {
    try {
      const artifact = await readers.catalog.summary(artifactId);
      documents.push({
        index: documents.length,
        id: `artifact:${artifactId}`,
        text: [artifact.name, artifact.summary, artifact.description].filter(Boolean).join('\n\n'),
      });
    } catch (error) {
      if (isServiceError(error) && error.code === 'artifact_not_found')
        throw new ServiceError('source_not_found', `sources.artifact_ids: no artifact "${artifactId}" in the catalog.`);
      throw error;
    }
  }
  if (documents.length === 0) throw new ServiceError('source_not_found', 'The named sources hold no text to answer from.');
  return documents;
}
