import { z } from 'zod';
import {
  MAX_ARTIFACT_README_CHARS,
  ArtifactId,
  ArtifactSource,
  ArtifactType,
  FilePath,
  Hosting,
  License,
  Pack,
  Revision,
  ReviewStatus,
  Sha256Hex,
  Tool,
} from '@svc/schemas';

const timestamp = z.iso.datetime({ offset: true }).optional();

/** One line of a catalog JSONL file; `kind` says what it holds. Unknown fields are refused. */
export const ImportRecord = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('artifact'),
      id: ArtifactId,
      name: z.string().min(1).max(200),
      type: ArtifactType,
      summary: z.string().max(500).default(''),
      description: z.string().max(20_000).default(''),
      readme: z.string().max(MAX_ARTIFACT_README_CHARS).default('').describe('The README (model card), CommonMark'),
      license: License,
      hosting: Hosting,
      source: ArtifactSource,
      repo: z.string().min(1).max(300).nullable().default(null),
      homepage: z.url().nullable().default(null),
      worksWith: z.array(Tool).max(16).default([]),
      tags: z.array(z.string().min(1).max(48)).max(32).default([]),
      reviewStatus: ReviewStatus.default('unreviewed'),
      latestRevision: Revision.optional(),
      createdAt: timestamp,
    })
    .strict(),
  z.object({ kind: z.literal('version'), artifactId: ArtifactId, revision: Revision, notes: z.string().max(5000).default(''), createdAt: timestamp }).strict(),
  z
    .object({
      kind: z.literal('file'),
      artifactId: ArtifactId,
      revision: Revision,
      path: FilePath,
      sha256: Sha256Hex.optional(),
      sizeBytes: z.number().int().nonnegative().optional(),
      mediaType: z.string().min(1).max(200).default('application/octet-stream'),
      tools: z.array(Tool).max(16).default([]),
      packs: z.array(Pack).max(8).default(['default', 'full']),
      /** Bytes to host: inline UTF-8 text, a file relative to the JSONL file, or an object already in the store. */
      content: z.string().optional(),
      contentFile: z.string().min(1).optional(),
      objectKey: z.string().min(1).max(1024).optional(),
    })
    .strict()
    .refine(
      (file) => [file.content, file.contentFile, file.objectKey].filter((value) => value !== undefined).length <= 1,
      'give at most one of content, contentFile, objectKey',
    )
    .refine(
      (file) => file.content !== undefined || file.contentFile !== undefined || (file.sha256 !== undefined && file.sizeBytes !== undefined),
      'a file without content needs sha256 and sizeBytes',
    ),
  z
    .object({
      kind: z.literal('trust-bundle'),
      id: z.string().min(1).max(128),
      artifactId: ArtifactId,
      revision: Revision,
      bundleKind: z.enum(['provenance', 'scan', 'license', 'attestation']),
      issuer: z.string().min(1).max(200),
      statement: z.record(z.string(), z.unknown()).default({}),
      subjects: z
        .array(z.object({ path: FilePath, sha256: Sha256Hex }).strict())
        .max(1000)
        .default([]),
      createdAt: timestamp,
    })
    .strict(),
  z
    .object({
      kind: z.literal('review'),
      id: z.string().min(1).max(128),
      artifactId: ArtifactId,
      author: z.string().min(1).max(120),
      rating: z.number().int().min(1).max(5),
      title: z.string().max(200).default(''),
      body: z.string().max(10_000).default(''),
      createdAt: timestamp,
    })
    .strict(),
]);
export type ImportRecord = z.infer<typeof ImportRecord>;
export type ImportRecordInput = z.input<typeof ImportRecord>;

/** A line of the file as read: its number, its JSON value, or why it is not JSON. */
export interface NumberedLine {
  line: number;
  value: unknown;
  invalidJson?: string;
}

/** A line that passed validation. */
export interface ParsedLine {
  line: number;
  record: ImportRecord;
}

/** A problem with one line; any problem stops the whole import. */
export interface ImportIssue {
  line: number;
  message: string;
}
