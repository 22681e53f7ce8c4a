export type { PrivateFileProblem, ExposedFilePolicy, PrivateFileOptions, PrivateFileCheck } from './privateFile.js';
export { readPrivateFileSync, checkPrivateDirectorySync } from './privateFile.js';
