//! Benchmark CSVs (`group,variant,key,n,ms,gkeys_per_s`) in, one throughput-vs-size SVG per group out.
//!
//! The GPU variant benchmarks write one row per measurement: `group` is `merge` or `sort`,
//! `variant` one of `basic`, `tiled`, `circular`, `twophase`, `cub`, `batcher`, `std` (others are
//! accepted), `key` the key type, `n` the number of keys, `ms` the time and `gkeys_per_s` the
//! throughput. [`read_csv`] / [`parse_csv`] check every row and say where a bad one is;
//! [`plots`] groups the rows into one [`Plot`] per group with one [`Series`] per variant (and key
//! type, when a group has several); [`render_svg`] draws throughput against `n` on a log2 axis;
//! [`write_plots`] writes `<out>/<group>_variants.svg` for each group.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

/// The header every CSV must start with, column for column.
pub const HEADER: &str = "group,variant,key,n,ms,gkeys_per_s";

/// Columns of a row: the names in [`HEADER`].
const COLUMNS: usize = 6;

/// Known variants in the order they are drawn and listed, each with its own color, so that one
/// variant looks the same in every plot. Textbook kernels first, then the two-phase one and its
/// peers.
const KNOWN_VARIANTS: [(&str, RGBColor); 7] = [
    ("basic", RGBColor(0x99, 0x99, 0x99)),
    ("tiled", RGBColor(0x1f, 0x77, 0xb4)),
    ("circular", RGBColor(0x2c, 0xa0, 0x2c)),
    ("twophase", RGBColor(0xd6, 0x27, 0x28)),
    ("cub", RGBColor(0x00, 0x00, 0x00)),
    ("batcher", RGBColor(0x94, 0x67, 0xbd)),
    ("std", RGBColor(0xff, 0x7f, 0x0e)),
];

/// Picture size in pixels: 16:10, wide enough for four size labels and a legend of seven series
/// at GitHub's markdown page width.
const SIZE: (u32, u32) = (960, 600);
/// Blank border around the chart, in pixels.
const MARGIN: u32 = 16;
/// Room for the tick labels and axis names, in pixels.
const X_LABEL_AREA: u32 = 48;
const Y_LABEL_AREA: u32 = 72;
/// Fonts (family, size in pixels) of the title and of the axis names, tick labels and legend.
const TITLE_FONT: (&str, u32) = ("sans-serif", 24);
const LABEL_FONT: (&str, u32) = ("sans-serif", 16);
/// Line width and marker radius of a series, in pixels: markers show where the measurements
/// are, since a line between 2^20 and 2^24 says nothing about the sizes in between.
const LINE_WIDTH: u32 = 2;
const MARKER_SIZE: u32 = 4;
/// Length of the line drawn next to a series name in the legend, in pixels.
const LEGEND_LINE: i32 = 20;
/// Padding of the axes around the data: half a doubling left and right of the sizes, and a
/// factor of 1.5 below and above the throughputs (the y axis is logarithmic).
const X_PAD_LOG2: f64 = 0.5;
const Y_PAD_FACTOR: f64 = 1.5;
/// About how many throughput ticks the log axis gets: enough to read values off to a factor
/// of ~1.5, few enough that plotters' log ticks do not crowd each other.
const Y_TICKS: usize = 10;
/// Opacity of the legend's white background, so that lines behind it stay visible.
const LEGEND_BACKGROUND_ALPHA: f64 = 0.8;
/// How close to an integer a log2 tick must be to get a `2^k` label.
const TICK_TOLERANCE: f64 = 1e-9;

/// One CSV row: a measured time and throughput of one variant at one size.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// `merge` or `sort`: which plot the row belongs to (also part of the file name).
    pub group: String,
    /// The implementation measured (`twophase`, `cub`, ...).
    pub variant: String,
    /// The key type (`u32`, `u64`, ...).
    pub key: String,
    /// Number of keys.
    pub n: u64,
    /// Time in milliseconds.
    pub ms: f64,
    /// Throughput in billions of keys per second: what the plots show.
    pub gkeys_per_s: f64,
    /// Where the row came from, `file:line`, for error messages.
    pub origin: String,
}

/// Why a CSV could not be read or a plot not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: empty file, expected the header `{HEADER}`")]
    Empty { file: String },
    #[error("{file}:1: expected the header `{HEADER}`, found `{found}`")]
    Header { file: String, found: String },
    #[error("{origin}: expected {COLUMNS} comma-separated fields, found {found}")]
    Fields { origin: String, found: usize },
    #[error("{origin}: column `{column}` is `{value}`: {reason}")]
    Value {
        origin: String,
        column: &'static str,
        value: String,
        reason: &'static str,
    },
    #[error("{second}: {series} at n = {n} was already measured at {first}")]
    Duplicate {
        first: String,
        second: String,
        /// `group/variant/key`.
        series: String,
        n: u64,
    },
    #[error("no measurements: every CSV given holds only its header")]
    NoData,
    #[error("drawing the `{group}` plot: {message}")]
    Render { group: String, message: String },
}

/// Parse one CSV's text; `source` names it in errors (a path, or any label). Blank lines are
/// skipped; fields are trimmed; quoting is not supported (no field of this format needs it).
pub fn parse_csv(text: &str, source: &str) -> Result<Vec<Measurement>, PlotError> {
    let mut lines = text.lines().enumerate();
    let header = loop {
        match lines.next() {
            None => {
                return Err(PlotError::Empty {
                    file: source.to_owned(),
                })
            }
            Some((_, line)) if line.trim().is_empty() => continue,
            Some((_, line)) => break line.trim(),
        }
    };
    let header_fields: Vec<&str> = header.split(',').map(str::trim).collect();
    if header_fields.join(",") != HEADER {
        return Err(PlotError::Header {
            file: source.to_owned(),
            found: header.to_owned(),
        });
    }
    let mut rows = Vec::new();
    for (index, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let origin = format!("{source}:{}", index + 1);
        rows.push(parse_row(line, origin)?);
    }
    Ok(rows)
}

/// Read and parse one CSV file.
pub fn read_csv(path: &Path) -> Result<Vec<Measurement>, PlotError> {
    let text = std::fs::read_to_string(path).map_err(|source| PlotError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_csv(&text, &path.display().to_string())
}

fn parse_row(line: &str, origin: String) -> Result<Measurement, PlotError> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let [group, variant, key, n, ms, gkeys] = fields[..] else {
        return Err(PlotError::Fields {
            origin,
            found: fields.len(),
        });
    };
    let bad = |column: &'static str, value: &str, reason: &'static str| PlotError::Value {
        origin: origin.clone(),
        column,
        value: value.to_owned(),
        reason,
    };
    for (column, value) in [("group", group), ("variant", variant), ("key", key)] {
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '+';
        if value.is_empty() || !value.chars().all(is_name) {
            return Err(bad(
                column,
                value,
                "must be a non-empty name of letters, digits, `_`, `-` or `+`",
            ));
        }
    }
    let n = match n.parse::<u64>() {
        Ok(0) => return Err(bad("n", n, "must be positive")),
        Ok(n) => n,
        Err(_) => return Err(bad("n", n, "not a whole number")),
    };
    let positive = |column: &'static str, value: &str| -> Result<f64, PlotError> {
        let x: f64 = value
            .parse()
            .map_err(|_| bad(column, value, "not a number"))?;
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(bad(column, value, "must be positive and finite"))
        }
    };
    Ok(Measurement {
        group: group.to_owned(),
        variant: variant.to_owned(),
        key: key.to_owned(),
        n,
        ms: positive("ms", ms)?,
        gkeys_per_s: positive("gkeys_per_s", gkeys)?,
        origin,
    })
}

/// One line of a plot: a variant's throughput at each size, ascending in `n`.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend entry: the variant, followed by the key type when the group has several.
    pub label: String,
    pub variant: String,
    pub key: String,
    /// `(n, gkeys_per_s)`, ascending in `n`.
    pub points: Vec<(u64, f64)>,
}

/// One picture: every series of one group.
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    pub group: String,
    pub series: Vec<Series>,
}

impl Plot {
    /// The file this plot is written to inside the output folder: `<group>_variants.svg`.
    pub fn file_name(&self) -> String {
        format!("{}_variants.svg", self.group)
    }
}

/// Drawing rank of a variant: the known ones in [`KNOWN_VARIANTS`] order, then the rest.
fn variant_rank(variant: &str) -> usize {
    KNOWN_VARIANTS
        .iter()
        .position(|(name, _)| *name == variant)
        .unwrap_or(KNOWN_VARIANTS.len())
}

/// Group measurements into plots (one per group, sorted by name) and series (one per variant and
/// key type, known variants first). Two measurements of the same group, variant, key and size are
/// an error, whichever files they come from: a plot never silently picks one of them.
pub fn plots(measurements: &[Measurement]) -> Result<Vec<Plot>, PlotError> {
    if measurements.is_empty() {
        return Err(PlotError::NoData);
    }
    type SeriesKey<'a> = (usize, &'a str, &'a str);
    let mut groups: BTreeMap<&str, BTreeMap<SeriesKey<'_>, BTreeMap<u64, &Measurement>>> =
        BTreeMap::new();
    for m in measurements {
        let series = (variant_rank(&m.variant), m.variant.as_str(), m.key.as_str());
        let points = groups
            .entry(m.group.as_str())
            .or_default()
            .entry(series)
            .or_default();
        if let Some(first) = points.insert(m.n, m) {
            return Err(PlotError::Duplicate {
                first: first.origin.clone(),
                second: m.origin.clone(),
                series: format!("{}/{}/{}", m.group, m.variant, m.key),
                n: m.n,
            });
        }
    }
    Ok(groups
        .into_iter()
        .map(|(group, series)| {
            let mut keys: Vec<&str> = series.keys().map(|&(_, _, key)| key).collect();
            keys.sort_unstable();
            keys.dedup();
            let several_keys = keys.len() > 1;
            Plot {
                group: group.to_owned(),
                series: series
                    .into_iter()
                    .map(|((_, variant, key), points)| Series {
                        label: if several_keys {
                            format!("{variant} {key}")
                        } else {
                            variant.to_owned()
                        },
                        variant: variant.to_owned(),
                        key: key.to_owned(),
                        points: points
                            .into_iter()
                            .map(|(n, m)| (n, m.gkeys_per_s))
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect())
}

/// The color of series `index` of a plot: a known variant's own color, else one from a palette.
fn series_color(series: &Series, index: usize) -> RGBColor {
    KNOWN_VARIANTS
        .iter()
        .find(|(name, _)| *name == series.variant)
        .map_or_else(
            || {
                let c = Palette99::pick(index).to_rgba();
                RGBColor(c.0, c.1, c.2)
            },
            |&(_, color)| color,
        )
}

/// The `2^k` label of a log2 tick, or nothing between whole powers.
fn log2_label(x: &f64) -> String {
    if (x - x.round()).abs() < TICK_TOLERANCE {
        format!("2^{}", x.round())
    } else {
        String::new()
    }
}

/// A throughput tick label: whole numbers from 10 up, else two decimals without trailing zeros
/// (`0.25`, `1.5`, `4`): the precision a log axis needs at that magnitude.
fn throughput_label(y: &f64) -> String {
    if *y >= 10.0 {
        format!("{y:.0}")
    } else {
        let s = format!("{y:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn render_error(group: &str, e: impl Display) -> PlotError {
    PlotError::Render {
        group: group.to_owned(),
        message: e.to_string(),
    }
}

/// Draw one plot as an SVG document: throughput (Gkeys/s, log axis) against `n` (log2 axis),
/// one line with markers per series, a legend with the series labels.
pub fn render_svg(plot: &Plot) -> Result<String, PlotError> {
    let fail = |e: &dyn Display| render_error(&plot.group, e);
    let points = plot.series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_min, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(n, y) in points {
        let x = (n as f64).log2();
        (x_min, x_max) = (x_min.min(x), x_max.max(x));
        (y_min, y_max) = (y_min.min(y), y_max.max(y));
    }
    if !(x_min <= x_max && y_min <= y_max) {
        return Err(fail(&"the plot has no points"));
    }
    let (x_lo, x_hi) = ((x_min - X_PAD_LOG2).floor(), (x_max + X_PAD_LOG2).ceil());
    // One tick per whole power of two (the range ends are whole numbers).
    let x_ticks = (x_hi - x_lo) as usize + 1;

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: throughput by variant", plot.group), TITLE_FONT)
            .margin(MARGIN)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(
                x_lo..x_hi,
                (y_min / Y_PAD_FACTOR..y_max * Y_PAD_FACTOR).log_scale(),
            )
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_labels(x_ticks)
            .x_label_formatter(&log2_label)
            .y_labels(Y_TICKS)
            .light_line_style(TRANSPARENT)
            .y_label_formatter(&throughput_label)
            .x_desc("n (keys)")
            .y_desc("Gkeys/s")
            .label_style(LABEL_FONT)
            .draw()
            .map_err(|e| fail(&e))?;
        for (index, series) in plot.series.iter().enumerate() {
            let color = series_color(series, index);
            let style = color.stroke_width(LINE_WIDTH);
            let coords: Vec<(f64, f64)> = series
                .points
                .iter()
                .map(|&(n, y)| ((n as f64).log2(), y))
                .collect();
            chart
                .draw_series(LineSeries::new(coords.iter().copied(), style))
                .map_err(|e| fail(&e))?
                .label(series.label.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + LEGEND_LINE, y)], style));
            chart
                .draw_series(
                    coords
                        .iter()
                        .map(|&point| Circle::new(point, MARKER_SIZE, color.filled())),
                )
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(LABEL_FONT)
            .background_style(WHITE.mix(LEGEND_BACKGROUND_ALPHA))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// Read every CSV, then write one SVG per group into `out_dir` (created if missing). Returns
/// the files written, in group order. Nothing is written unless every file parses.
pub fn write_plots(csvs: &[PathBuf], out_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let mut measurements = Vec::new();
    for csv in csvs {
        measurements.extend(read_csv(csv)?);
    }
    let plots = plots(&measurements)?;
    let rendered = plots
        .iter()
        .map(|plot| Ok((out_dir.join(plot.file_name()), render_svg(plot)?)))
        .collect::<Result<Vec<_>, PlotError>>()?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| PlotError::Io { path, source }
    };
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    for (path, svg) in &rendered {
        std::fs::write(path, svg).map_err(io(path))?;
    }
    Ok(rendered.into_iter().map(|(path, _)| path).collect())
}

/// What the command line asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Plot `csvs` into `out`.
    Plot { csvs: Vec<PathBuf>, out: PathBuf },
    /// Print the usage.
    Help,
}

/// The usage text of the `twophase-plots` binary.
pub const USAGE: &str = "usage: twophase-plots <csv>... [--out <dir>]

Reads benchmark CSVs with the header `group,variant,key,n,ms,gkeys_per_s` and writes
<dir>/<group>_variants.svg for each group (throughput vs n, one line per variant).
<dir> defaults to docs/plots.";

/// Where plots go when `--out` is not given.
pub const DEFAULT_OUT: &str = "docs/plots";

/// Parse the arguments after the program name. Errors are the message to print above the usage.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Command, String> {
    let mut csvs = Vec::new();
    let mut out = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--out" | "-o" => match args.next() {
                Some(dir) if out.is_none() => out = Some(PathBuf::from(dir)),
                Some(_) => return Err("--out given twice".into()),
                None => return Err("--out needs a folder".into()),
            },
            flag if flag.starts_with('-') && flag != "-" => {
                return Err(format!("unknown option `{flag}`"))
            }
            _ => csvs.push(PathBuf::from(arg)),
        }
    }
    if csvs.is_empty() {
        return Err("no CSV file given".into());
    }
    Ok(Command::Plot {
        csvs,
        out: out.unwrap_or_else(|| PathBuf::from(DEFAULT_OUT)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CSV like the variant benchmark's: merge and sort groups, several variants, one key
    /// type. The numbers are made up for the test and appear nowhere else.
    const SAMPLE: &str = "group,variant,key,n,ms,gkeys_per_s
merge,basic,u32,1048576,1.0,1.048576
merge,basic,u32,16777216,8.0,2.097152
merge,twophase,u32,16777216,0.5,33.554432
merge,twophase,u32,1048576,0.25,4.194304
merge,cub,u32,1048576,0.25,4.194304

sort,batcher,u32,1048576,2.0,0.524288
sort,twophase,u32,1048576,1.0,1.048576
sort,std,u32,1073741824,4096.0,0.262144
";

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write test CSV");
        path
    }

    #[test]
    fn parses_rows_with_their_origin() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = write(dir.path(), "bench.csv", SAMPLE);
        let rows = read_csv(&path).expect("valid CSV");
        assert_eq!(rows.len(), 8);
        assert_eq!(rows[2].group, "merge");
        assert_eq!(rows[2].variant, "twophase");
        assert_eq!(rows[2].key, "u32");
        assert_eq!(rows[2].n, 1 << 24);
        assert_eq!(rows[2].ms, 0.5);
        assert_eq!(rows[2].gkeys_per_s, 33.554432);
        assert_eq!(rows[2].origin, format!("{}:4", path.display()));
        // The blank line is skipped but still counted in the line numbers.
        assert_eq!(rows[5].origin, format!("{}:8", path.display()));
        assert_eq!(rows[7].n, 1 << 30);
    }

    #[test]
    fn groups_series_in_variant_order_sorted_by_n() {
        let rows = parse_csv(SAMPLE, "sample").expect("valid CSV");
        let plots = plots(&rows).expect("plots");
        assert_eq!(plots.len(), 2);
        assert_eq!(plots[0].group, "merge");
        assert_eq!(plots[0].file_name(), "merge_variants.svg");
        let labels: Vec<&str> = plots[0].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["basic", "twophase", "cub"]);
        assert_eq!(
            plots[0].series[1].points,
            [(1 << 20, 4.194304), (1 << 24, 33.554432)]
        );
        let labels: Vec<&str> = plots[1].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["twophase", "batcher", "std"]);
    }

    #[test]
    fn labels_carry_the_key_type_when_a_group_has_several() {
        let text = format!("{HEADER}\nmerge,twophase,u32,1024,1,0.001\nmerge,twophase,u64,1024,2,0.0005\nmerge,zeta,u64,1024,2,0.0005\n");
        let plots = plots(&parse_csv(&text, "t").expect("valid")).expect("plots");
        let labels: Vec<&str> = plots[0].series.iter().map(|s| s.label.as_str()).collect();
        // Unknown variants come after the known ones.
        assert_eq!(labels, ["twophase u32", "twophase u64", "zeta u64"]);
    }

    /// The texts of an SVG document (what is between `<text ...>` and `</text>`), trimmed.
    fn svg_texts(svg: &str) -> Vec<&str> {
        svg.split("<text")
            .skip(1)
            .filter_map(|element| {
                let body = &element[element.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim())
            })
            .collect()
    }

    #[test]
    fn writes_one_svg_per_group_naming_every_series() {
        let dir = tempfile::tempdir().expect("temp dir");
        let csv = write(dir.path(), "bench.csv", SAMPLE);
        let out = dir.path().join("plots");
        let written = write_plots(&[csv], &out).expect("plots written");
        assert_eq!(
            written,
            [
                out.join("merge_variants.svg"),
                out.join("sort_variants.svg")
            ]
        );
        let merge = std::fs::read_to_string(&written[0]).expect("merge SVG");
        assert!(merge.starts_with("<svg"), "not an SVG");
        let texts = svg_texts(&merge);
        for text in [
            "merge: throughput by variant",
            "basic",
            "twophase",
            "cub",
            "2^20",
            "2^24",
            "Gkeys/s",
            "n (keys)",
        ] {
            assert!(texts.contains(&text), "merge plot lacks {text}: {texts:?}");
        }
        assert!(!texts.contains(&"batcher"));
        let sort = std::fs::read_to_string(&written[1]).expect("sort SVG");
        let texts = svg_texts(&sort);
        for text in ["batcher", "twophase", "std", "2^30"] {
            assert!(texts.contains(&text), "sort plot lacks {text}: {texts:?}");
        }
        // One line per series, in its variant's color.
        for (variant, color) in KNOWN_VARIANTS {
            if !["twophase", "batcher", "std"].contains(&variant) {
                continue;
            }
            let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2);
            assert!(sort.contains(&stroke), "no {variant} line ({stroke})");
        }
    }

    #[test]
    fn reports_the_file_and_line_of_a_bad_row() {
        let check = |text: &str, expected: &str| {
            let err = parse_csv(text, "f.csv").expect_err(text).to_string();
            assert!(
                err.contains(expected),
                "`{err}` should contain `{expected}`"
            );
        };
        check("", "empty file");
        check("group,variant,key,n,ms\n", "f.csv:1: expected the header");
        check(
            &format!("{HEADER}\nmerge,twophase,u32,1024,1\n"),
            "f.csv:2: expected 6",
        );
        check(
            &format!("{HEADER}\nmerge,twophase,u32,1e3,1,1\n"),
            "`n` is `1e3`: not a whole",
        );
        check(
            &format!("{HEADER}\nmerge,twophase,u32,0,1,1\n"),
            "`n` is `0`: must be positive",
        );
        check(
            &format!("{HEADER}\nmerge,twophase,u32,8,fast,1\n"),
            "`ms` is `fast`: not a number",
        );
        check(
            &format!("{HEADER}\n\nmerge,twophase,u32,8,1,-2\n"),
            "f.csv:3: column `gkeys_per_s`",
        );
        check(
            &format!("{HEADER}\nmerge,twophase,u32,8,NaN,1\n"),
            "positive and finite",
        );
        check(
            &format!("{HEADER}\n../x,twophase,u32,8,1,1\n"),
            "column `group`",
        );
    }

    #[test]
    fn refuses_a_measurement_given_twice() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = write(dir.path(), "a.csv", SAMPLE);
        let b = write(
            dir.path(),
            "b.csv",
            &format!("{HEADER}\nsort,std,u32,1073741824,4000,0.27\n"),
        );
        let out = dir.path().join("plots");
        let err = write_plots(&[a.clone(), b.clone()], &out).expect_err("duplicate");
        let message = err.to_string();
        assert!(message.contains(&format!("{}:2", b.display())), "{message}");
        assert!(
            message.contains(&format!("{}:10", a.display())),
            "{message}"
        );
        assert!(!out.exists(), "nothing is written when an input is refused");
    }

    #[test]
    fn missing_files_and_empty_data_are_errors() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("missing.csv");
        let err = write_plots(std::slice::from_ref(&missing), dir.path()).expect_err("missing");
        assert!(matches!(err, PlotError::Io { ref path, .. } if *path == missing));
        let header_only = write(dir.path(), "h.csv", &format!("{HEADER}\n"));
        let err = write_plots(&[header_only], dir.path()).expect_err("no rows");
        assert!(matches!(err, PlotError::NoData));
    }

    #[test]
    fn tick_labels() {
        assert_eq!(log2_label(&27.0), "2^27");
        assert_eq!(log2_label(&27.5), "");
        assert_eq!(throughput_label(&335.7), "336");
        assert_eq!(throughput_label(&8.73), "8.73");
        assert_eq!(throughput_label(&4.0), "4");
        assert_eq!(throughput_label(&1.5), "1.5");
        assert_eq!(throughput_label(&0.262), "0.26");
    }

    #[test]
    fn command_line() {
        let args = |s: &str| parse_args(s.split_whitespace().map(String::from));
        assert_eq!(
            args("a.csv b.csv --out x"),
            Ok(Command::Plot {
                csvs: vec!["a.csv".into(), "b.csv".into()],
                out: "x".into()
            })
        );
        assert_eq!(
            args("a.csv"),
            Ok(Command::Plot {
                csvs: vec!["a.csv".into()],
                out: DEFAULT_OUT.into()
            })
        );
        assert_eq!(args("--help"), Ok(Command::Help));
        assert!(args("").is_err());
        assert!(args("a.csv --out").is_err());
        assert!(args("a.csv --out x --out y").is_err());
        assert!(args("a.csv --svg").is_err());
    }
}
