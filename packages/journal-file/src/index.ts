export { type JournalFileEvent, journalFileChannels } from "./diagnostics.js";
export { JournalError, type JournalErrorCode } from "./errors.js";
export { type FileJournalSnapshot, FileUpdateJournal } from "./file-update-journal.js";
export { type FileUpdateJournalOptions, fileUpdateJournalDefaults } from "./options.js";
