"""The baseline of the text benches: Spark MLlib's MinHashLSH self-join (approxSimilarityJoin
at Jaccard distance 1 - 0.7) on the same word 3-shingles as the ground truth, and the number
of its hash tables that reaches a recall target.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pyspark.ml.feature import HashingTF, MinHashLSH
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf
from pyspark.sql.types import ArrayType, LongType

from lib.corpora import SEED
from lib.truth import SHINGLE_W, THRESHOLD
from neardup_udfs.kernels.words_jit import word_shingles_batch

# HashingTF width: two documents of 10,000 shingles each expect ~0.05 index collisions
MLLIB_FEATURES = 1 << 30
TARGET_RECALL_075 = 0.99  # the job's recall target at J >= 0.75, MLlib's default too


def mllib_tables(target_recall: float = TARGET_RECALL_075, j: float = 0.75) -> int:
    """Fewest MinHashLSH tables L with candidate probability 1 - (1 - J)^L >= target at J.

    MLlib's MinHashLSH is pure OR-amplification (one MinHash per table), so a pair with
    Jaccard J is a candidate with probability 1 - (1 - J)^L, and approxSimilarityJoin then
    checks its exact Jaccard distance: recall = that probability, precision = 1 (on the
    hashed sets). L = 3 already gives 0.973 at J = 0.7 (the baseline's >= 0.95); L = 4 is
    the fewest that also gives >= 0.99 at J = 0.75 (0.996; 0.992 at 0.7), the job's target.
    """
    return math.ceil(math.log(1 - target_recall) / math.log(1 - j))


def _shingles_udf() -> Any:
    w = SHINGLE_W

    @pandas_udf(ArrayType(LongType()))  # type: ignore[call-overload]
    def shingles(texts: pd.Series) -> pd.Series:
        hashes, offsets = word_shingles_batch(texts.tolist(), w)
        signed = hashes.view(np.int64)
        return pd.Series(
            [np.unique(signed[offsets[i] : offsets[i + 1]]) for i in range(len(texts))]
        )

    return shingles


def mllib_join(
    spark: SparkSession, path: Path, out: Path, tables: int, id_col: str = "id"
) -> tuple[DataFrame, int]:
    """The MLlib pipeline ``run_mllib`` times: read the jsonl at ``path`` (columns ``id_col``,
    text), word 3-shingles (documents without any dropped: MinHashLSH rejects empty
    vectors), HashingTF (binary, 2^30), MinHashLSH (``tables`` tables, seeded), self-join
    with approxSimilarityJoin at Jaccard distance 1 - 0.7, and the pairs (a < b, distance)
    written as parquet to ``out``. Returns the hashed documents (persisted: unpersist them)
    and their count."""
    shingles = _shingles_udf()
    text = shingles(F.col("text")).alias("sh")
    docs = spark.read.json(str(path)).select(F.col(id_col).alias("id"), text)
    docs = docs.where(F.size("sh") > 0)
    tf = HashingTF(inputCol="sh", outputCol="features", numFeatures=MLLIB_FEATURES)
    feats = tf.setBinary(True).transform(docs).select("id", "features")
    lsh = MinHashLSH(inputCol="features", outputCol="hashes", numHashTables=tables, seed=SEED)
    model = lsh.fit(feats)
    hashed = model.transform(feats).persist()
    count = hashed.count()
    # distance < 1 - 0.7 would drop pairs at exactly J = 0.7 (Spark filters with "<")
    joined = model.approxSimilarityJoin(hashed, hashed, 1.0 - THRESHOLD + 1e-9, "distance")
    pairs = joined.select(
        F.col("datasetA.id").alias("a"), F.col("datasetB.id").alias("b"), "distance"
    ).where(F.col("a") < F.col("b"))
    pairs.write.mode("overwrite").parquet(str(out))
    return hashed, count
