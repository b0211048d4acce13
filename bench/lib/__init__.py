"""What the bench scripts share, one module per idea; no bench script imports another.

A bench runs as ``python bench/X.py`` (or is imported by a test with bench/ on sys.path), so
this package imports as ``lib``: ``from lib.corpora import load_real``.

- ``project``: the repository root, and project files outside the package by path;
- ``timing``: best of n runs;
- ``progress``: progress lines on stderr;
- ``tables``: the plain-text tables on stdout;
- ``spark``: the in-process SparkSession of the benches, and the machine's description;
- ``corpora``: the real texts of ../shared/data, the scaled family corpus, corpora as JSON lines;
- ``truth``: exact all-pairs Jaccard of the word 3-shingle sets (the ground truth);
- ``scoring``: found pairs and a job's clusters scored against that truth;
- ``mllib``: Spark MLlib's MinHashLSH self-join, the baseline;
- ``dense_corpus``: the duplicate-dense corpus (heavy-tailed families of chained edits);
- ``processes``: whole spark-submit processes, timed;
- ``images``: the real images of ../shared/data/images, distinct by pHash;
- ``visible_text``: bench_web's own view of a page (its visible text) and its shingles;
- ``planted_families``: bench_web's corpora of planted families: documents, families, renderings;
- ``web_corpus``: bench_web's ``web`` corpus, from the WARC files of ../shared/data/crawl;
- ``man_corpus``: bench_web's ``zh`` and ``ja`` corpora, from the Debian man pages;
- ``web_truth``: bench_web's ground truth, and the job's clusters scored against it.
"""
