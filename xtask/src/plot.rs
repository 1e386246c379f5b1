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
