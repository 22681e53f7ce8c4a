/** What `screen.snapshot` asks a backend for, after defaults and aliases. */
export interface SnapshotRequest {
  readonly screenIndex: number;
  readonly maxWidth: number | undefined;
  readonly format: 'png' | 'jpeg';
  /** 0..1 (JPEG only). */
  readonly quality: number;
  readonly includePointer: boolean;
}

/** An encoded picture and its final size. */
export interface CapturedImage {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
  /** Where the captured screen lies in the input backend's coordinates, when known (X11 root pixels). */
  readonly source?: { readonly x: number; readonly y: number; readonly width: number; readonly height: number };
}

/** What `screen.record` asks a backend for, after defaults. */
export interface RecordRequest {
  readonly screenIndex: number;
  readonly durationMs: number;
  readonly fps: number;
  readonly includeAudio: boolean;
  readonly includePointer: boolean;
}
