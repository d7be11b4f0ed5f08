"""Reports of a gate's results: Markdown and HTML (render), JUnit XML (junit), the difference of two gate
results (diff), plots as SVG text (svg). Writes are atomic (opcert.files)."""
