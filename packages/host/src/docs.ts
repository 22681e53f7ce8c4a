export { COMMANDS_DOC_COMMAND, formatCommandsMarkdown, stockCommandsMarkdown } from './docs/commandDocs.js';
export { SKILL_DESCRIPTION, SKILL_DOC_COMMAND, SKILL_NAME, formatSkillMarkdown, stockSkillMarkdown } from './docs/skillDoc.js';
