import { defineErrorClass } from '@capnode/toolkit';

/** Local failures of the OpenAgent channel; `capability_transport_lost` makes a call's outcome ambiguous (no result is sent). */
export class OpenAgentChannelError extends defineErrorClass('OpenAgentChannelError', [
  /** The socket closed, changed, or its send buffer stalled for 30 s. */
  'capability_transport_lost',
  /** A result carries more than 64 artifacts. */
  'too_many_artifacts',
  /** A result's artifacts exceed 64 MiB. */
  'artifact_too_large',
]) {}
