"""Reports: JSON (and later Markdown, HTML, JUnit)."""
