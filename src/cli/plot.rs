//! The benchmark's picture: one panel per primitive, throughput against size on log axes, one line per backend, as SVG.

use plotters::prelude::*;

use super::bench::Row;

/// Picture size in pixels: two panels across, two down, each about 640 by 420.
const SIZE: (u32, u32) = (1280, 880);
/// Blank border around each panel, in pixels.
const MARGIN: u32 = 12;
/// Room for the tick labels and axis names, in pixels.
const X_LABEL_AREA: u32 = 40;
const Y_LABEL_AREA: u32 = 64;
/// Fonts (family, size in pixels) of the panel titles and of the labels and legends.
const TITLE_FONT: (&str, u32) = ("sans-serif", 22);
const LABEL_FONT: (&str, u32) = ("sans-serif", 15);
/// Line width and marker radius of a series, in pixels.
const LINE_WIDTH: u32 = 2;
const MARKER_SIZE: u32 = 3;
/// Length of the line drawn next to a series name in a legend, in pixels.
const LEGEND_LINE: i32 = 18;
/// Padding around the data: half a doubling left and right, a factor of 1.5 below and above.
const X_PAD_LOG2: f64 = 0.5;
const Y_PAD_FACTOR: f64 = 1.5;
/// About how many ticks the log throughput axis gets.
const Y_TICKS: usize = 8;
/// Opacity of a legend's white background, so that lines behind it stay visible.
const LEGEND_BACKGROUND_ALPHA: f64 = 0.8;
/// How close to an integer a log2 tick must be to get a `2^k` label.
const TICK_TOLERANCE: f64 = 1e-9;

/// Each backend's color, the same in every panel (and as in crates/plots where it has one).
const VARIANT_COLORS: [(&str, RGBColor); 4] = [
    ("gpu", RGBColor(0xd6, 0x27, 0x28)),
    ("cpu", RGBColor(0x1f, 0x77, 0xb4)),
    ("std", RGBColor(0xff, 0x7f, 0x0e)),
    ("rayon", RGBColor(0x2c, 0xa0, 0x2c)),
];

/// Panel titles by primitive, in the order the panels are laid out.
const PANELS: [(&str, &str); 4] = [
    ("sort", "stable sort (u32)"),
    ("merge", "merge (u32)"),
    ("sorted_search", "sorted search (u32)"),
    ("load_balance", "load-balancing search"),
];

/// `2^k` on whole powers of two, nothing between.
fn log2_label(x: &f64) -> String {
    if (x - x.round()).abs() < TICK_TOLERANCE {
        format!("2^{}", x.round())
    } else {
        String::new()
    }
}

/// A throughput label: whole numbers from 10 up, else up to two decimals.
fn throughput_label(y: &f64) -> String {
    if *y >= 10.0 {
        format!("{y:.0}")
    } else {
        let s = format!("{y:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// The SVG document of `rows`: Gkeys/s against n for each primitive and backend.
pub fn render(rows: &[Row]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let panels = root.split_evenly((2, 2));
        for ((primitive, title), area) in PANELS.iter().zip(panels.iter()) {
            let series: Vec<Series<'_>> = VARIANT_COLORS
                .iter()
                .map(|&(variant, color)| {
                    let points = rows
                        .iter()
                        .filter(|r| r.primitive == *primitive && r.variant == variant)
                        .map(|r| ((r.n as f64).log2(), r.gkeys_per_s()))
                        .collect::<Vec<_>>();
                    (variant, color, points)
                })
                .filter(|(_, _, points)| !points.is_empty())
                .collect();
            draw_panel(area, title, &series).map_err(|e| format!("{title}: {e}"))?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

type Panel<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// One line of a panel: the backend, its color, and its (log2 n, Gkeys/s) points.
type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

/// One primitive's panel; nothing drawn but the title when it has no points.
fn draw_panel(
    area: &Panel<'_>,
    title: &str,
    series: &[Series<'_>],
) -> Result<(), Box<dyn std::error::Error>> {
    let points = series.iter().flat_map(|(_, _, points)| points.iter());
    let (mut x_min, mut x_max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_min, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in points {
        (x_min, x_max) = (x_min.min(x), x_max.max(x));
        (y_min, y_max) = (y_min.min(y), y_max.max(y));
    }
    if !(x_min <= x_max && y_min <= y_max && y_min > 0.0) {
        area.titled(title, TITLE_FONT)?;
        return Ok(());
    }
    let (x_lo, x_hi) = ((x_min - X_PAD_LOG2).floor(), (x_max + X_PAD_LOG2).ceil());
    let x_ticks = (x_hi - x_lo) as usize + 1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, TITLE_FONT)
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(
            x_lo..x_hi,
            (y_min / Y_PAD_FACTOR..y_max * Y_PAD_FACTOR).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_labels(x_ticks)
        .x_label_formatter(&log2_label)
        .y_labels(Y_TICKS)
        .y_label_formatter(&throughput_label)
        .light_line_style(TRANSPARENT)
        .x_desc("n (keys)")
        .y_desc("Gkeys/s")
        .label_style(LABEL_FONT)
        .draw()?;
    for (variant, color, coords) in series {
        let style = color.stroke_width(LINE_WIDTH);
        chart
            .draw_series(LineSeries::new(coords.iter().copied(), style))?
            .label(*variant)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + LEGEND_LINE, y)], style));
        chart.draw_series(
            coords
                .iter()
                .map(|&point| Circle::new(point, MARKER_SIZE, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(LABEL_FONT)
        .background_style(WHITE.mix(LEGEND_BACKGROUND_ALPHA))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
