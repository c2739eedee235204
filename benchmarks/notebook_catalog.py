"""A second catalogue shape for ``search_quality.py``: notebook-style helper tools.

The tools this project ships (built-ins) plus generated helpers of the kind a data notebook
collects (``load_parquet``, ``plot_histogram``, ``train_random_forest``), with queries that
ask for them in other words. Ranking choices made on the toolret catalogue (MCP servers of
hosted products) should hold here too; nothing in ``core/search`` was tuned on it.

Each family has the words its tools' descriptions use and, separately, the words a request
uses for the same thing, so a query never just repeats a description.
"""

from __future__ import annotations

import random
from typing import Any

from nexus_jupyter.core.tools.spec import ToolSpec

_MODELS: dict[str, tuple[str, str]] = {
    "linear_regression": ("ordinary least squares linear regression", "straight-line fit"),
    "logistic_regression": ("logistic regression classifier", "logit classifier"),
    "random_forest": ("random forest ensemble", "bagged decision trees"),
    "gradient_boosting": ("gradient boosted trees", "boosted tree ensemble"),
    "kmeans": ("k-means clustering", "grouping of rows into k clusters"),
    "pca": ("principal component analysis", "dimensionality reduction"),
    "svm": ("support vector machine", "max-margin classifier"),
    "knn": ("k nearest neighbours", "nearest-neighbour voting model"),
    "naive_bayes": ("Gaussian naive Bayes", "Bayes classifier with independence"),
    "decision_tree": ("single decision tree", "one tree of if-then splits"),
}

# family: (name pattern, description pattern, parameters, request patterns, {item: (described
# as, asked as)})
_FAMILIES: dict[str, tuple[str, str, list[str], list[str], dict[str, tuple[str, str]]]] = {
    "load": (
        "load_{item}",
        "Read a {desc} file from disk into a pandas DataFrame.",
        ["path", "columns"],
        ["open the {ask} at data/sales.{item} as a table", "get {ask} data into a dataframe"],
        {
            "csv": ("comma-separated values", "spreadsheet export"),
            "parquet": ("Apache Parquet columnar", "columnar parquet dump"),
            "excel": ("Microsoft Excel workbook", "xlsx workbook"),
            "json": ("JSON records", "json lines"),
            "feather": ("Arrow Feather", "feather"),
            "stata": ("Stata .dta", "stata dataset"),
            "sas": ("SAS7BDAT", "sas export"),
            "hdf5": ("HDF5 store", "h5 store"),
        },
    ),
    "save": (
        "save_{item}",
        "Write a DataFrame to a {desc} file.",
        ["df", "path"],
        ["export my results table as {ask}", "dump the frame to disk in {ask} format"],
        {
            "csv": ("comma-separated values", "csv"),
            "parquet": ("Apache Parquet columnar", "parquet"),
            "excel": ("Microsoft Excel workbook", "xlsx"),
            "json": ("JSON records", "json"),
            "latex": ("LaTeX tabular", "latex table"),
            "markdown": ("Markdown table", "md table"),
        },
    ),
    "plot": (
        "plot_{item}",
        "Draw a {desc} of DataFrame columns with matplotlib.",
        ["df", "x", "y", "title"],
        ["visualise {ask} for the price column", "chart showing {ask}"],
        {
            "histogram": ("histogram", "how values are distributed"),
            "scatter": ("scatter plot", "one variable against another as dots"),
            "line": ("line chart", "a trend over time"),
            "bar": ("bar chart", "counts per category as bars"),
            "box": ("box plot", "quartiles and outliers"),
            "heatmap": ("heatmap", "a colour grid of the correlation matrix"),
            "pie": ("pie chart", "shares of a whole as slices"),
            "violin": ("violin plot", "density per group, mirrored"),
            "pairplot": ("pair plot grid", "every column against every other"),
            "ecdf": ("empirical cumulative distribution", "cumulative share below each value"),
        },
    ),
    "stat": (
        "compute_{item}",
        "Compute the {desc} of numeric DataFrame columns.",
        ["df", "columns"],
        ["what is the {ask} of revenue", "give me the {ask} per column"],
        {
            "mean": ("arithmetic mean", "average"),
            "median": ("median", "middle value"),
            "std": ("standard deviation", "spread"),
            "correlation": ("pairwise Pearson correlation", "co-movement between columns"),
            "quantiles": ("quantiles", "percentiles"),
            "skewness": ("skewness", "asymmetry of the distribution"),
            "mode": ("most frequent value", "commonest value"),
            "covariance": ("covariance matrix", "joint variability"),
        },
    ),
    "clean": (
        "{item}",
        "{desc} in a DataFrame.",
        ["df", "columns"],
        ["{ask} in my table", "please {ask}"],
        {
            "drop_duplicates": ("Remove duplicate rows", "get rid of repeated records"),
            "fill_missing": ("Fill missing values with a constant or method", "impute the NaNs"),
            "drop_missing": ("Drop rows with missing values", "discard incomplete records"),
            "standardize_columns": ("Scale columns to zero mean and unit variance", "z-score"),
            "one_hot_encode": ("Expand categorical columns into indicator columns", "dummies"),
            "parse_dates": ("Convert string columns to datetime", "turn text into timestamps"),
            "rename_columns": ("Rename columns from a mapping", "change the column headers"),
            "clip_outliers": ("Clip values outside given quantiles", "cap extreme values"),
            "strip_whitespace": ("Trim surrounding spaces from text columns", "trim blanks"),
            "bin_column": ("Cut a numeric column into intervals", "bucket ages into ranges"),
        },
    ),
    "train": (
        "train_{item}",
        "Fit a {desc} model on features and a target with scikit-learn.",
        ["X", "y", "params"],
        ["fit {ask} to predict churn", "build a {ask} on my training set"],
        _MODELS,
    ),
    "predict": (
        "predict_{item}",
        "Predict targets for new rows with a fitted {desc} model.",
        ["model", "X"],
        ["score the new customers with my trained {ask}", "apply the fitted {ask} to new rows"],
        _MODELS,
    ),
    "evaluate": (
        "evaluate_{item}",
        "Cross-validate a {desc} model and report accuracy or error per fold.",
        ["X", "y", "folds"],
        ["how good is a {ask} here, k-fold", "validation scores of a {ask}"],
        _MODELS,
    ),
    "grouped": (
        "plot_{item}_by_group",
        "Draw one {desc} per value of a categorical column, side by side.",
        ["df", "column", "group"],
        ["{ask} split by region", "one panel of {ask} for each segment"],
        {
            "histogram": ("histogram", "value distributions"),
            "box": ("box plot", "quartiles"),
            "line": ("line chart", "trends over time"),
            "bar": ("bar chart", "category counts"),
            "scatter": ("scatter plot", "x against y dots"),
        },
    ),
    "rolling": (
        "rolling_{item}",
        "Compute a moving-window {desc} along a time-indexed column.",
        ["series", "window"],
        ["{ask} over the last 7 days, sliding", "trailing {ask} of daily visits"],
        {
            "sum": ("sum", "total"),
            "max": ("maximum", "peak"),
            "min": ("minimum", "low point"),
            "std": ("standard deviation", "volatility"),
            "median": ("median", "middle value"),
        },
    ),
    "utility": (
        "{item}",
        "{desc}.",
        ["target"],
        ["{ask}", "could you {ask}"],
        {
            "download_file": ("Download a URL to a local file", "fetch that zip off the web"),
            "fetch_json_api": ("GET a JSON API endpoint and parse it", "call the REST endpoint"),
            "unzip_archive": ("Extract a zip or tar archive", "unpack the compressed bundle"),
            "hash_file": ("Compute the SHA-256 digest of a file", "checksum the download"),
            "geocode_address": ("Turn a street address into coordinates", "lat/long of an address"),
            "distance_between_points": ("Great-circle distance of two coordinates", "km apart"),
            "clear_outputs": ("Clear every cell output of the notebook", "wipe the cell results"),
            "list_variables": ("List the variables defined in the kernel", "what names exist"),
            "memory_usage": ("Report memory used by each DataFrame", "how much RAM frames use"),
            "convert_timezone": ("Convert timestamps between time zones", "UTC to Tokyo time"),
        },
    ),
    "text": (
        "{item}",
        "{desc} for a column of documents.",
        ["texts", "language"],
        ["{ask} for these customer reviews", "I need to {ask}"],
        {
            "tokenize_text": ("Split text into word tokens", "break sentences into words"),
            "detect_sentiment": ("Score positive or negative polarity", "tell happy from angry"),
            "translate_text": ("Translate text into another language", "render it in French"),
            "summarize_text": ("Write a short abstract of each text", "condense long documents"),
            "detect_language": ("Identify the language of each text", "which tongue is this"),
            "extract_keywords": ("Extract salient key phrases", "pull out the main terms"),
            "named_entities": ("Find people, places and organisations", "spot names of companies"),
            "word_frequencies": ("Count how often each word occurs", "tally word usage"),
        },
    ),
    "series": (
        "{item}",
        "{desc} of a time-indexed series.",
        ["series", "window"],
        ["{ask} on daily sales", "show the {ask}"],
        {
            "resample_series": ("Change the frequency by aggregating", "weekly totals from days"),
            "rolling_mean": ("Moving average over a window", "smoothed trend line"),
            "seasonal_decompose": ("Split into trend, seasonal and residual parts", "seasonality"),
            "forecast_arima": ("ARIMA forecast of future values", "predict next month"),
            "autocorrelation": ("Correlation with lagged copies", "how today relates to yesterday"),
            "detect_anomalies": ("Flag points far from the expected value", "spot weird spikes"),
        },
    ),
    "image": (
        "{item}_image",
        "{desc} of an image file with Pillow.",
        ["path", "size"],
        ["{ask} photo.png", "can you {ask} this picture"],
        {
            "resize": ("Change the pixel dimensions", "make smaller"),
            "crop": ("Cut out a rectangular region", "trim the borders of"),
            "rotate": ("Turn by an angle", "turn sideways"),
            "grayscale": ("Convert to shades of grey", "remove the colour from"),
            "blur": ("Apply a Gaussian blur", "soften"),
            "edges": ("Detect edges with a Sobel filter", "outline the contours in"),
        },
    ),
    "sql": (
        "{item}",
        "{desc} in the notebook's SQLite database.",
        ["sql", "table"],
        ["{ask} in the local db", "{ask} please"],
        {
            "run_query": ("Run a SELECT statement and return rows", "look up rows with a query"),
            "list_tables": ("List the table names", "which tables exist"),
            "describe_table": ("Show the columns and types of a table", "schema of orders"),
            "insert_rows": ("Insert DataFrame rows into a table", "append records to orders"),
        },
    ),
}
_DATASETS = (
    "iris",
    "titanic",
    "penguins",
    "diamonds",
    "tips",
    "flights",
    "mpg",
    "wine",
    "digits",
    "boston",
    "housing",
    "mnist",
    "fashion",
    "cifar",
    "imdb",
    "reviews",
    "airline",
    "passengers",
    "sunspots",
    "co2",
    "energy",
    "bikes",
    "taxi",
    "covid",
    "gapminder",
    "nyc_trees",
    "planets",
    "exercise",
    "anscombe",
    "car_crashes",
    "brain_networks",
    "dots",
    "fmri",
    "geyser",
    "glue",
    "healthexp",
    "attention",
    "seaice",
    "adult",
    "abalone",
    "auto_mpg",
    "breast_cancer",
    "california",
    "covertype",
    "credit_default",
    "heart_disease",
    "mushrooms",
    "spam",
    "wholesale",
    "yeast",
    "zoo",
    "bank_marketing",
    "online_retail",
    "air_quality",
    "electricity",
    "traffic",
    "weather_history",
    "wine_quality",
    "glass",
    "ionosphere",
    "sonar",
    "seeds",
    "letters",
    "optdigits",
    "pendigits",
    "satimage",
    "segment",
    "vehicle",
    "vowel",
    "waveform",
    "parkinsons",
    "diabetes",
    "liver",
    "thyroid",
    "ecoli",
    "balance_scale",
    "car_evaluation",
    "nursery",
    "chess",
    "connect4",
    "poker_hand",
    "skin",
    "shuttle",
    "magic_gamma",
    "higgs",
    "susy",
    "kddcup",
    "census_income",
)


def _spec(name: str, description: str, params: list[str]) -> ToolSpec:
    props: dict[str, Any] = {p: {"type": "string"} for p in params}
    return ToolSpec(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": props},
        source="notebook",
        source_kind="notebook",
    )


def notebook_catalog(builtins: list[ToolSpec], seed: int = 5) -> tuple[list[ToolSpec], list[dict]]:
    """``builtins`` plus the generated tools, and labelled queries (servable and not)."""
    rng = random.Random(seed)
    specs = list(builtins)
    queries: list[dict] = []
    for name_pattern, desc_pattern, params, asks, items in _FAMILIES.values():
        for item, (desc, ask) in items.items():
            name = name_pattern.format(item=item)
            specs.append(_spec(name, desc_pattern.format(desc=desc), params))
            pattern = rng.choice(asks)
            queries.append({"query": pattern.format(ask=ask, item=item), "relevant": [name]})
    for dataset in _DATASETS:  # the per-dataset loaders notebooks accumulate
        title = dataset.replace("_", " ")
        specs.append(
            _spec(f"load_{dataset}_dataset", f"Load the {title} sample dataset.", ["cache"])
        )
    for dataset in rng.sample(_DATASETS, 6):
        title = dataset.replace("_", " ")
        queries.append(
            {"query": f"get me the {title} example data", "relevant": [f"load_{dataset}_dataset"]}
        )
    for request in (
        "send an SMS to the on-call engineer",
        "book a meeting room for friday",
        "order more printer toner",
        "transcribe this voicemail recording",
        "turn off the office lights",
        "pay the electricity bill",
        "schedule a tweet for tomorrow morning",
        "compile this C++ project",
        "renew the TLS certificate on the web server",
        "play some jazz music",
    ):
        queries.append({"query": request, "relevant": []})
    return specs, queries
