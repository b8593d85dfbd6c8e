//! Output: VTU/PVD for ParaView, JSON reports, PNG plots, progress bars. Every file is written to a
//! temporary sibling and renamed into place, so an output file is either whole or absent.
