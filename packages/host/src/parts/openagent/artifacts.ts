import { createHash } from 'node:crypto';
import { OpenAgentChannelError } from './channelError.js';

/** Content decoded to at least this many bytes goes out as an artifact (desktop `ARTIFACT_THRESHOLD_BYTES`). */
export const ARTIFACT_THRESHOLD_BYTES = 256 * 1024;
/** Raw bytes per `client_artifact_chunk`. */
export const ARTIFACT_CHUNK_BYTES = 512 * 1024;
/** Most artifact bytes in one result. */
export const MAX_ARTIFACT_BYTES_PER_CALL = 64 * 1024 * 1024;
/** Most artifacts in one result. */
export const MAX_ARTIFACTS_PER_CALL = 64;

/** One artifact to stream before the result. */
export interface PreparedArtifact {
  readonly transferId: string;
  readonly mimeType: string;
  readonly sha256: string;
  readonly data: Buffer;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BINARY_BLOCKS: ReadonlySet<string> = new Set(['image', 'audio', 'video', 'file', 'blob']);

/** Decoded bytes of strict base64 (whitespace ignored); `undefined` when it is not base64 (then it stays inline). */
function decodeBase64(value: string): Buffer | undefined {
  const compact = value.replace(/\s/g, '');
  if (compact === '' || compact.length % 4 !== 0 || !BASE64.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

const stringField = (record: Record<string, unknown>, ...names: string[]) => names.map((name) => record[name]).find((value): value is string => typeof value === 'string');

/** The data of a block that may become an artifact, with its template (the block without the data) and where the data goes back. */
function artifactCandidate(block: Record<string, unknown>, meta: Record<string, unknown> | undefined) {
  const type = block.type;
  if (typeof type === 'string' && BINARY_BLOCKS.has(type) && typeof block.data === 'string') {
    const { data, ...template } = block;
    return { encoded: data as string, template, path: ['data'], mimeType: stringField(block, 'mimeType', 'mime_type') };
  }
  const resource = block.resource as Record<string, unknown> | undefined;
  if (type === 'resource' && typeof resource === 'object' && resource !== null && typeof resource.blob === 'string') {
    const { blob, ...rest } = resource;
    return { encoded: blob as string, template: { ...block, resource: rest }, path: ['resource', 'blob'], mimeType: stringField(resource, 'mimeType', 'mime_type') };
  }
  if (type === 'text' && typeof block.text === 'string' && meta?.encoding === 'base64') {
    const { text, ...template } = block;
    return { encoded: text as string, template, path: ['text'], mimeType: stringField(meta, 'mimeType') };
  }
  return undefined;
}

/**
 * Replaces every content block whose base64 data decodes to ≥ 256 KiB with an `artifact_ref`
 * (`transfer_id` = call id[0:160]-index-sha256[0:12], the block without its data as
 * `artifact_template`, `artifact_insert_path`) and returns the artifacts to stream before the result.
 * @throws OpenAgentChannelError `too_many_artifacts` (> 64), `artifact_too_large` (> 64 MiB in all).
 */
export function prepareArtifacts(result: Record<string, unknown>, callId: string): { readonly result: Record<string, unknown>; readonly artifacts: readonly PreparedArtifact[] } {
  const content = result.content;
  if (!Array.isArray(content)) return { result, artifacts: [] };
  const meta = result._meta as Record<string, unknown> | undefined;
  const artifacts: PreparedArtifact[] = [];
  let total = 0;
  const blocks = content.map((block: unknown) => {
    if (typeof block !== 'object' || block === null) return block;
    const candidate = artifactCandidate(block as Record<string, unknown>, meta);
    const data = candidate ? decodeBase64(candidate.encoded) : undefined;
    if (!candidate || !data || data.length < ARTIFACT_THRESHOLD_BYTES) return block;
    if (artifacts.length >= MAX_ARTIFACTS_PER_CALL) throw new OpenAgentChannelError('too_many_artifacts', `a result may carry at most ${MAX_ARTIFACTS_PER_CALL} artifacts`);
    total += data.length;
    if (total > MAX_ARTIFACT_BYTES_PER_CALL) throw new OpenAgentChannelError('artifact_too_large', `a result's artifacts may hold at most ${MAX_ARTIFACT_BYTES_PER_CALL} bytes`);
    const sha256 = createHash('sha256').update(data).digest('hex');
    const transferId = `${callId.slice(0, 160)}-${artifacts.length}-${sha256.slice(0, 12)}`;
    artifacts.push({ transferId, mimeType: (candidate.mimeType || 'application/octet-stream').slice(0, 255), sha256, data });
    return { type: 'artifact_ref', transfer_id: transferId, artifact_template: candidate.template, artifact_insert_path: candidate.path };
  });
  return artifacts.length === 0 ? { result, artifacts } : { result: { ...result, content: blocks }, artifacts };
}

/** The chunk frames of one artifact, each encoded only when the writer reaches it. */
export function* artifactChunks(artifact: PreparedArtifact, callId: string, generation: number): Generator<() => string> {
  const { data } = artifact;
  for (let offset = 0, seq = 0; offset < data.length; offset += ARTIFACT_CHUNK_BYTES, seq += 1) {
    const start = offset;
    const index = seq;
    yield () =>
      JSON.stringify({
        type: 'client_artifact_chunk',
        call_id: callId,
        generation,
        transfer_id: artifact.transferId,
        seq: index,
        data: data.subarray(start, start + ARTIFACT_CHUNK_BYTES).toString('base64'),
        eof: start + ARTIFACT_CHUNK_BYTES >= data.length,
        ...(index === 0 ? { size: data.length, mime_type: artifact.mimeType, sha256: artifact.sha256 } : {}),
      });
  }
}
