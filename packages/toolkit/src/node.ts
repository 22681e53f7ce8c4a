export type { PrivateFileProblem, ExposedFilePolicy, PrivateFileOptions, PrivateFileCheck } from './privateFile.js';
export { readPrivateFileSync, checkPrivateDirectorySync } from './privateFile.js';
export type { PrivateWriteOptions, PrivateWriteAsyncOptions } from './atomicFile.js';
export { writePrivateFileAtomic, writePrivateFileAtomicSync, createPrivateFileExclusive, createPrivateFileExclusiveSync } from './atomicFile.js';
