/** OpenClaw's node capability families (`connect.caps`). */
export const GATEWAY_CAP_FAMILIES = ['camera', 'computer', 'location', 'screen', 'browser', 'canvas', 'talk'] as const;

export type GatewayCapFamily = (typeof GATEWAY_CAP_FAMILIES)[number];

/** capnode command categories that belong to a family under another name. */
const CATEGORY_FAMILY: Readonly<Record<string, GatewayCapFamily>> = {
  tts: 'talk',
  stt: 'talk',
  microphone: 'talk',
};

/** The family of a capnode category, or `undefined` when it has none (system, device, clipboard, …). */
export function capFamily(category: string): GatewayCapFamily | undefined {
  const lower = category.toLowerCase();
  return CATEGORY_FAMILY[lower] ?? (GATEWAY_CAP_FAMILIES as readonly string[]).find((family) => family === lower) as GatewayCapFamily | undefined;
}

/**
 * The caps a node declares for the categories of the commands it declares, in first-seen order:
 * only OpenClaw's families, each once. A category whose commands were all withheld (localOnly,
 * unavailable) is absent from `categories`, so its cap is not sent.
 */
export function gatewayCaps(categories: Iterable<string>): GatewayCapFamily[] {
  const caps: GatewayCapFamily[] = [];
  for (const category of categories) {
    const family = capFamily(category);
    if (family && !caps.includes(family)) caps.push(family);
  }
  return caps;
}
