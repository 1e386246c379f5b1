//! Line charts for the experiment reports (PNG through plotters).
//!
//! One figure is a grid of [`Panel`]s; each panel holds labelled [`Series`]
//! on linear or logarithmic axes. Colours come from one palette indexed by
//! the series' `colour` so that the same setting (say, one training size) has
//! the same colour in every panel.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

/// One polyline (or a set of markers) in a panel.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text; empty for no legend entry.
    pub label: String,
    /// Palette index.
    pub colour: usize,
    /// Points `(x, y)`; non-finite or (on log axes) non-positive points are dropped.
    pub points: Vec<(f64, f64)>,
    /// Thin line instead of a thick one (reference curves, baselines).
    pub thin: bool,
    /// Draw markers instead of a line.
    pub markers: bool,
}

impl Series {
    /// A thick line.
    pub fn line(label: impl Into<String>, colour: usize, points: Vec<(f64, f64)>) -> Self {
        Self { label: label.into(), colour, points, thin: false, markers: false }
    }

    /// A thin line (baseline or reference slope).
    pub fn thin(label: impl Into<String>, colour: usize, points: Vec<(f64, f64)>) -> Self {
        Self { thin: true, ..Self::line(label, colour, points) }
    }
}

/// One chart of a figure.
#[derive(Debug, Clone, Default)]
pub struct Panel {
    /// Caption above the chart.
    pub title: String,
    /// Axis descriptions.
    pub x_label: String,
    /// Axis descriptions.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The curves.
    pub series: Vec<Series>,
}

impl Panel {
    /// A panel titled `title` with axis labels `(x, y)`, logarithmic axes
    /// where `(log_x, log_y)` say so, and `series`.
    pub fn new(
        title: impl Into<String>,
        (x_label, y_label): (impl Into<String>, impl Into<String>),
        (log_x, log_y): (bool, bool),
        series: Vec<Series>,
    ) -> Self {
        Self { title: title.into(), x_label: x_label.into(), y_label: y_label.into(), log_x, log_y, series }
    }
}

/// A palette that stays readable on white.
pub fn colour(i: usize) -> RGBColor {
    const P: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    P[i % P.len()]
}

fn keep(p: &(f64, f64), log_x: bool, log_y: bool) -> bool {
    p.0.is_finite() && p.1.is_finite() && (!log_x || p.0 > 0.0) && (!log_y || p.1 > 0.0)
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (if log { 0.1 } else { 0.0 }, 1.0);
    }
    if log {
        let (l, h) = (lo.log10(), hi.log10());
        let pad = ((h - l) * 0.05).max(0.05);
        (10f64.powf(l - pad), 10f64.powf(h + pad))
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-12);
        (lo - pad, hi + pad)
    }
}

/// Draws `panels` on a grid with `cols` columns into a PNG at `path`, each
/// panel `panel_size` pixels.
pub fn draw_png(path: &Path, panels: &[Panel], cols: usize, panel_size: (u32, u32)) -> Result<()> {
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols);
    let size = (panel_size.0 * cols as u32, panel_size.1 * rows as u32);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("plot {}: {e}", path.display()))?;
    let areas = root.split_evenly((rows, cols));
    for (panel, area) in panels.iter().zip(areas.iter()) {
        draw_panel(panel, area).map_err(|e| anyhow!("plot {}: {e}", path.display()))?;
    }
    root.present().map_err(|e| anyhow!("plot {}: {e}", path.display()))?;
    Ok(())
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

fn draw_panel(panel: &Panel, area: &Area<'_>) -> Result<(), Box<dyn std::error::Error>> {
    let pts = || panel.series.iter().flat_map(|s| s.points.iter()).filter(|p| keep(p, panel.log_x, panel.log_y));
    let (x0, x1) = range(pts().map(|p| p.0), panel.log_x);
    let (y0, y1) = range(pts().map(|p| p.1), panel.log_y);
    let mut builder = ChartBuilder::on(area);
    builder.caption(&panel.title, ("sans-serif", 18)).margin(10).x_label_area_size(40).y_label_area_size(60);
    // plotters types the chart by its coordinate kind, so the four axis
    // combinations each get their own (identical) drawing code.
    macro_rules! draw {
        ($xr:expr, $yr:expr) => {{
            let mut chart = builder.build_cartesian_2d($xr, $yr)?;
            chart
                .configure_mesh()
                .x_desc(panel.x_label.as_str())
                .y_desc(panel.y_label.as_str())
                .x_labels(6)
                .y_labels(6)
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            for s in &panel.series {
                let c = colour(s.colour);
                let data: Vec<(f64, f64)> =
                    s.points.iter().copied().filter(|p| keep(p, panel.log_x, panel.log_y)).collect();
                let width = if s.thin { 1 } else { 2 };
                let drawn = if s.markers {
                    chart.draw_series(data.iter().map(|&p| Circle::new(p, 3, c.filled())))?
                } else {
                    chart.draw_series(LineSeries::new(data, c.stroke_width(width)))?
                };
                if !s.label.is_empty() {
                    drawn
                        .label(s.label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(width)));
                }
            }
            if panel.series.iter().any(|s| !s.label.is_empty()) {
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK.mix(0.3))
                    .label_font(("sans-serif", 12))
                    .draw()?;
            }
        }};
    }
    match (panel.log_x, panel.log_y) {
        (true, true) => draw!((x0..x1).log_scale(), (y0..y1).log_scale()),
        (true, false) => draw!((x0..x1).log_scale(), y0..y1),
        (false, true) => draw!(x0..x1, (y0..y1).log_scale()),
        (false, false) => draw!(x0..x1, y0..y1),
    }
    Ok(())
}

/// One bar of a grouped bar chart.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Palette index and legend entry (index into the series names).
    pub series: usize,
    /// Bar height.
    pub value: f64,
    /// Half-length of the error bar (one std), if any.
    pub std: Option<f64>,
    /// A reference value (the paper's) drawn as a black tick across the bar.
    pub reference: Option<f64>,
}

/// A labelled group of bars (one data set or setting).
#[derive(Debug, Clone)]
pub struct BarGroup {
    /// Label under the group.
    pub label: String,
    /// The bars, left to right.
    pub bars: Vec<Bar>,
}

/// Draws a grouped bar chart into a PNG at `path`: one colour per series
/// name, error bars of one std, references (published values) as black ticks.
/// The y axis starts at `y_min` (or 0) and ends above the largest bar or reference.
pub fn draw_bars_png(
    path: &Path,
    title: &str,
    y_label: &str,
    series: &[&str],
    groups: &[BarGroup],
    y_min: Option<f64>,
    size: (u32, u32),
) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| anyhow!("plot {}: {e}", path.display());
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let top = groups
        .iter()
        .flat_map(|g| g.bars.iter())
        .map(|b| (b.value + b.std.unwrap_or(0.0)).max(b.reference.unwrap_or(f64::NEG_INFINITY)))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let lo = y_min.unwrap_or(0.0);
    // Head room for the legend in the upper right.
    let hi = top + 0.3 * (top - lo).max(1e-9);
    let max_bars = groups.iter().map(|g| g.bars.len()).max().unwrap_or(1).max(1) as f64;
    let labels: Vec<String> = groups.iter().map(|g| g.label.clone()).collect();
    // Many groups get vertical labels; a few keep them horizontal.
    let rotate = groups.len() > 8;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(if rotate { 110 } else { 40 })
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..groups.len() as f64, lo..hi)
        .map_err(|e| err(&e))?;
    let style = if rotate {
        ("sans-serif", 12).into_font().transform(FontTransform::Rotate90)
    } else {
        ("sans-serif", 13).into_font()
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&|v| {
            // Label the group centres only.
            let f = v.fract();
            if (f - 0.5).abs() < 1e-6 {
                labels.get(v.floor() as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_style(style)
        .y_desc(y_label)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(&e))?;
    let width = 0.8 / max_bars;
    let mut legend_done = vec![false; series.len()];
    let mut paper_legend = false;
    for (gi, g) in groups.iter().enumerate() {
        for (bi, b) in g.bars.iter().enumerate() {
            let x0 = gi as f64 + 0.1 + bi as f64 * width;
            let x1 = x0 + width * 0.9;
            let c = colour(b.series);
            let drawn = chart
                .draw_series(std::iter::once(Rectangle::new([(x0, lo), (x1, b.value)], c.filled())))
                .map_err(|e| err(&e))?;
            if !legend_done.get(b.series).copied().unwrap_or(true) {
                legend_done[b.series] = true;
                drawn
                    .label(series[b.series])
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
            }
            let xm = (x0 + x1) / 2.0;
            if let Some(s) = b.std.filter(|s| *s > 0.0) {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(xm, b.value - s), (xm, b.value + s)],
                        BLACK.stroke_width(1),
                    )))
                    .map_err(|e| err(&e))?;
            }
            if let Some(r) = b.reference {
                let drawn = chart
                    .draw_series(std::iter::once(PathElement::new(vec![(x0, r), (x1, r)], BLACK.stroke_width(3))))
                    .map_err(|e| err(&e))?;
                if !paper_legend {
                    paper_legend = true;
                    drawn
                        .label("paper (Table 1)")
                        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], BLACK.stroke_width(3)));
                }
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
