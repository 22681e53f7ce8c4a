import type { CallElicitor } from '../types.js';

/**
 * The elicitors of one server's calls in flight whose clients can take the server's questions
 * (`forwardElicitation`). The idle clock is the session's (`idle_timeout_secs`), not this.
 */
export class CallsInFlight {
  readonly #elicitors = new Set<CallElicitor>();

  /**
   * Marks a call in flight until the returned function is called: meanwhile `elicit` (the caller's
   * client can answer questions) is offered to the server's questions.
   */
  begin(elicit?: CallElicitor): () => void {
    if (!elicit) return () => {};
    // A fresh function per call, so two calls with the same elicitor are counted apart.
    const entry: CallElicitor = (request, options) => elicit(request, options);
    this.#elicitors.add(entry);
    return () => {
      this.#elicitors.delete(entry);
    };
  }

  /**
   * The elicitor a server question goes to: the calling client's, when exactly one call in flight has
   * one (with several, which call asked cannot be told, so none is used).
   */
  elicitor(): CallElicitor | undefined {
    if (this.#elicitors.size !== 1) return undefined;
    return this.#elicitors.values().next().value;
  }
}
