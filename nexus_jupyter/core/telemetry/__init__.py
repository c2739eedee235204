"""What calls leave behind besides the audit log: per-tool statistics (:mod:`.stats`, always
on and cheap) and OpenTelemetry spans (:mod:`.tracing`, only when OpenTelemetry is set up)."""
