// The operator's web panel (assets/panel/panel.html), built into the
// streamer so that it needs no files at run time and nothing from the
// internet: one page, its style and script inline.
#pragma once

#include <string_view>

namespace tilestream {

std::string_view PanelHtml();

}  // namespace tilestream
