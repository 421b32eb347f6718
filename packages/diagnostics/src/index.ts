export type { Span } from "./span.js";
export { LineIndex, joinSpans } from "./span.js";
export type { Diagnostic, DiagnosticInit, Fix, RelatedInformation, Severity, TextEdit } from "./diagnostic.js";
export { diagnostic, hasErrors, sortDiagnostics } from "./diagnostic.js";
export type { DiagnosticCode, DiagnosticCodeEntry } from "./codes.js";
export { diagnosticCodes } from "./codes.js";
export { closestName } from "./suggest.js";
export { stripByteOrderMark } from "./byte-order-mark.js";
export { EARLIEST_EVENT_TIME, formatDateTime, isEventTime, LATEST_EVENT_TIME, parseDateTime } from "./date-time.js";
