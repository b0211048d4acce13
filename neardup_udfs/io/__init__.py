"""Reading inputs and writing outputs: the readers (text, JSON lines, parquet, WARC/WET), the
files Spark passes over, and the one filesystem layer every output goes through."""
