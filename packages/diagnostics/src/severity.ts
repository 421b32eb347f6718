/**
 * How serious a diagnostic is. Its own module because both the registry of codes (each code's
 * default severity) and the diagnostic itself name it, and the diagnostic reads the registry.
 */
export type Severity = "error" | "warning" | "info";
