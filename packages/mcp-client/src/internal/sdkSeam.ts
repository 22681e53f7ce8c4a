import { SdkHttpError } from '@modelcontextprotocol/client';

/**
 * The SDK seam of `@capnode/mcp-client`: every SDK behaviour the runtime depends on beyond the
 * typed public surface goes through this module, and `sdkSeam.contract.test.ts` pins it against the
 * installed SDK, so an upgrade that changes it fails a test instead of silently degrading.
 * Today that is only the HTTP status of a failed Streamable HTTP request, read through the public
 * `SdkHttpError` (no private member is used).
 */

/** The HTTP status of a failed SDK HTTP transport request, or `undefined` for any other error. */
export function httpStatusOf(error: unknown): number | undefined {
  return error instanceof SdkHttpError && typeof error.status === 'number' ? error.status : undefined;
}
