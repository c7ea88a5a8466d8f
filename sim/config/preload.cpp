// Documents parsed ahead of their load: by Document::peek (which kind of file is this?) for the load that follows,
// and by Document::prepare (a sweep, before forking its points) for each child's load. yaml.hpp says what each
// promises: a kept document is taken once, and only by a load of the same path whose text is still the same.
#include <algorithm>

#include "config/preload.hpp"
#include "config/yaml.hpp"
#include "core/files.hpp"

namespace framesim::config {

namespace {

/// A document parsed ahead, waiting for the load that takes it.
struct Kept {
  std::string path, text;
  std::shared_ptr<Document> doc;
  std::vector<core::Diagnostic> problems;  // found while parsing it
  bool prepared = false;                   // by Document::prepare (no limit on how many)
};

std::vector<Kept>& kept() {
  static std::vector<Kept> documents;
  return documents;
}

}  // namespace

std::shared_ptr<Document> Document::take_kept(const std::filesystem::path& path, const std::string& text,
                                              core::Diagnostics& diagnostics) {
  auto& all = kept();
  for (auto it = all.begin(); it != all.end(); ++it) {
    if (it->path != path.string() || it->text != text) continue;
    auto doc = std::move(it->doc);
    for (auto& d : it->problems) diagnostics.add(std::move(d));
    // Parsed by the process a sweep's point was forked from: its memory is already counted, and freeing it here
    // would copy each page it writes to before freeing anything (a peeked one was kept or not when parsed here).
    if (it->prepared) keep_to_exit(doc, it->text.size(), true);
    all.erase(it);
    doc->diagnostics_ = &diagnostics;
    return doc;
  }
  return nullptr;
}

std::shared_ptr<Document> Document::keep(const std::filesystem::path& path, bool prepared) {
  Kept k{path.string(), core::read_file(path), nullptr, {}, prepared};
  core::Diagnostics problems;
  k.doc = parse(k.text, display_of(path), problems);
  k.doc->folder_ = path.parent_path();
  k.doc->diagnostics_ = nullptr;  // until a load takes it
  k.problems = problems.items();
  auto& all = kept();
  auto peeked = [](const Kept& e) { return !e.prepared; };
  if (!prepared && std::count_if(all.begin(), all.end(), peeked) >= 4)
    all.erase(std::find_if(all.begin(), all.end(), peeked));
  all.push_back(std::move(k));
  return all.back().doc;
}

std::shared_ptr<const Document> Document::peek(const std::filesystem::path& path) { return keep(path, false); }

void Document::prepare(const std::filesystem::path& path) { keep(path, true); }

void preload_yaml(const std::filesystem::path& path) { Document::prepare(path); }

}  // namespace framesim::config
