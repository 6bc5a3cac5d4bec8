Read Crush's internal application logs (default {{ .DefaultLines }} entries, max {{ .MaxLines }}); useful for diagnosing provider errors, tool failures, LSP/MCP issues.

<usage>
- Returns recent log entries from Crush's internal log file
- Use to diagnose issues with Crush itself (provider errors, tool failures,
  LSP problems, MCP connection issues)
- Entries shown in compact format: TIME LEVEL SOURCE MESSAGE key=value...
</usage>

<tips>
- Default returns last {{ .DefaultLines }} entries; use lines parameter for more (max {{ .MaxLines }})
- Look for ERROR and WARN entries first when diagnosing problems
</tips>
