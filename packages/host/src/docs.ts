export { COMMANDS_DOC_COMMAND, formatCommandsMarkdown, stockCommandsMarkdown } from './docs/commandDocs.js';
