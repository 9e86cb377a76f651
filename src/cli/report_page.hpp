// `disttune report`: one self-contained HTML page of typed records, each config's timing
// samples plotted as inline SVG (no scripts, no network fetches), failures and choices marked.
#pragma once

#include <string>
#include <vector>

#include "cli/cache_listing.hpp"

namespace disttune::cli {

/// The page for the records under `root`: a section per function, a part per key (and
/// hardware) with plot and table; `listed` entries whose read failed are listed as bad files.
std::string report_page(const std::string& root, const std::vector<ListedRecord>& listed);

}  // namespace disttune::cli
