//! Charts of one type side by side ([`Row`]) or stacked ([`Column`]), each panel equally large.

use super::Chart;
use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};

/// Charts of one type side by side, equally wide.
pub struct Row<'a, C: Chart>(pub Vec<&'a C>);

impl<C: Chart> Chart for Row<'_, C> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        let cells = area.split_evenly((1, self.0.len().max(1)));
        for (chart, cell) in self.0.iter().zip(&cells) {
            chart.draw(cell)?;
        }
        Ok(())
    }
}

/// Charts of one type stacked, equally high.
pub struct Column<'a, C: Chart>(pub Vec<&'a C>);

impl<C: Chart> Chart for Column<'_, C> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        let cells = area.split_evenly((self.0.len().max(1), 1));
        for (chart, cell) in self.0.iter().zip(&cells) {
            chart.draw(cell)?;
        }
        Ok(())
    }
}
