/** The largest delay `setTimeout` honours; longer ones fire at once, so every timer delay is capped at it. */
export const MAX_TIMER_MS = 2_147_483_647;
