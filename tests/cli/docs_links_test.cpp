// Documentation that points outside the repository, or at a file that was renamed, is found here: every relative
// link in every Markdown file of the source tree must name a file or folder that exists in a clone (issue 13).
#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace framesim {
namespace {

namespace fs = std::filesystem;

/// The Markdown files under `root`, skipping hidden folders, build folders and node_modules.
std::vector<fs::path> markdown_files(const fs::path& root) {
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.front() == '.' || name.rfind("build", 0) == 0 || name == "node_modules")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".md") out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// "FILE: LINK" for every dead relative link of the Markdown files under `root`: a link [text](path) that names
/// nothing relative to its file, and a path in backticks that names nothing when it is written relative to its
/// file (`../x`, `./x`) or names a .md file (from its file's folder or from `root`, as these documents write
/// paths). Web links, anchors within a page and fenced code blocks are left alone; "#anchor" tails are dropped.
std::vector<std::string> dead_links(const fs::path& root) {
  static const std::regex link(R"(\[[^\]]*\]\(([^)\s]+)\))");
  static const std::regex code(R"(`([^`\s]+)`)");
  static const std::regex scheme(R"(^[a-zA-Z][a-zA-Z0-9+.-]*:)");
  std::vector<std::string> dead;
  for (const auto& file : markdown_files(root)) {
    std::istringstream in(core::read_file(file));
    bool fenced = false;
    const fs::path folder = file.parent_path();
    auto report = [&](const std::string& target) { dead.push_back(fs::relative(file, root).string() + ": " + target); };
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("```", 0) == 0) fenced = !fenced;
      if (fenced) continue;
      for (std::sregex_iterator m(line.begin(), line.end(), link), end; m != end; ++m) {
        const std::string target = (*m)[1];
        if (std::regex_search(target, scheme) || target.front() == '#') continue;
        if (!fs::exists(folder / target.substr(0, target.find('#')))) report(target);
      }
      for (std::sregex_iterator m(line.begin(), line.end(), code), end; m != end; ++m) {
        const std::string target = (*m)[1];
        const std::string path = target.substr(0, target.find('#'));
        const bool relative = path.rfind("../", 0) == 0 || path.rfind("./", 0) == 0;
        const bool markdown =
            path.size() > 3 && path.substr(path.size() - 3) == ".md" && path.find('*') == std::string::npos;
        if (relative && !fs::exists(folder / path)) report(target);
        else if (!relative && markdown && !fs::exists(folder / path) && !fs::exists(root / path)) report(target);
      }
    }
  }
  return dead;
}

TEST(DocsLinks, EveryRelativeLinkNamesAFileOfTheRepository) {
  EXPECT_EQ(dead_links(FRAMESIM_SOURCE_DIR), std::vector<std::string>{});
}

// The check itself: in a folder of two documents, it reports exactly the three dead links written there.
TEST(DocsLinks, TheCheckReportsDeadLinks) {
  framesim::testing::Scratch scratch;
  fs::create_directories(scratch.dir() / "docs");
  scratch.write("README.md",
                "See [the guide](docs/guide.md), [gone](docs/gone.md), [web](https://example.org),\n"
                "[here](#top) and `docs/guide.md`.\n```sh\ncat `../outside/in/code.md`\n```\n");
  scratch.write("docs/guide.md",
                "Back to [the top](../README.md#top); `../../shared/notes/x.md`; `missing.md`;\n"
                "`./guide.md` and `README.md` (from the root) are fine.\n");
  EXPECT_EQ(dead_links(scratch.dir()),
            (std::vector<std::string>{"README.md: docs/gone.md", "docs/guide.md: ../../shared/notes/x.md",
                                      "docs/guide.md: missing.md"}));
}

}  // namespace
}  // namespace framesim
