/** A JSON-RPC error response with an HTTP status, as every entry-level refusal is answered. */
export function jsonRpcErrorResponse(
  status: number,
  code: number,
  message: string,
  data?: unknown,
  id: string | number | null = null,
  headers?: Record<string, string>,
): Response {
  const error = data === undefined ? { code, message } : { code, message, data };
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error }), {
    status,
    headers: headers === undefined ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', ...headers },
  });
}
