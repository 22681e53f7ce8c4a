// Small helpers shared by the runtime's modules.

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
