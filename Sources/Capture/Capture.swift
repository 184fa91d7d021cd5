/// Capture
