// load_plain_yaml against yaml-cpp itself (the oracle: an independent parser): on every YAML file in the repository
// and on hand-written texts at the edges of the plain subset, a text the quick reader takes gives the very tree
// YAML::Load gives (every node's type, scalar, tag, style and mark, keys in order), and a text it leaves (outside
// the subset, or not YAML at all) goes to yaml-cpp.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "config/yaml_plain.hpp"
#include "core/files.hpp"
#include "test_support.hpp"

using framesim::config::load_plain_yaml;
using framesim::testing::source_path;
namespace fs = std::filesystem;

namespace {

/// The first difference between two trees, as "path: what" ("" when they are the same).
std::string difference(const YAML::Node& a, const YAML::Node& b, const std::string& path) {
  auto mark = [](const YAML::Mark& m) {
    return std::to_string(m.pos) + "@" + std::to_string(m.line) + ":" + std::to_string(m.column);
  };
  if (a.Type() != b.Type()) return path + ": type " + std::to_string(a.Type()) + " vs " + std::to_string(b.Type());
  if (a.Tag() != b.Tag()) return path + ": tag " + a.Tag() + " vs " + b.Tag();
  if (mark(a.Mark()) != mark(b.Mark())) return path + ": mark " + mark(a.Mark()) + " vs " + mark(b.Mark());
  if (a.Style() != b.Style()) return path + ": style";
  if (a.IsScalar() && a.Scalar() != b.Scalar()) return path + ": \"" + a.Scalar() + "\" vs \"" + b.Scalar() + "\"";
  if (a.size() != b.size()) return path + ": size " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  if (a.IsSequence()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (auto d = difference(a[i], b[i], path + "[" + std::to_string(i) + "]"); !d.empty()) return d;
  } else if (a.IsMap()) {
    auto ia = a.begin();
    auto ib = b.begin();
    for (std::size_t i = 0; ia != a.end(); ++ia, ++ib, ++i) {
      const std::string at = path + "{" + std::to_string(i) + "}";
      if (auto d = difference(ia->first, ib->first, at + ".key"); !d.empty()) return d;
      if (auto d = difference(ia->second, ib->second, at + ".value"); !d.empty()) return d;
    }
  }
  return "";
}

/// Whether the quick reader took `text`; when it did, its tree must be yaml-cpp's (checked here).
bool taken_and_same(const std::string& text, const std::string& name) {
  const auto plain = load_plain_yaml(text);
  if (!plain) return false;
  YAML::Node reference;
  try {
    reference = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    ADD_FAILURE() << name << ": taken, but yaml-cpp refuses it: " << e.what();
    return true;
  }
  EXPECT_EQ(difference(*plain, reference, "root"), "") << name;
  return true;
}

}  // namespace

TEST(PlainYaml, EveryYamlFileOfTheRepositoryReadsAsYamlCppReadsIt) {
  const fs::path root = source_path("");
  std::vector<std::string> taken;
  std::vector<std::string> left;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == "node_modules" || name == ".git" || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || (it->path().extension() != ".yaml" && it->path().extension() != ".yml")) continue;
    std::string text = framesim::core::read_file(it->path());
    if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
    const std::string rel = fs::relative(it->path(), root).generic_string();
    (taken_and_same(text, rel) ? taken : left).push_back(rel);
  }
  // Not a vacuous comparison: the shipped hardware, networks and scenarios are plain YAML, all taken.
  ASSERT_GE(taken.size(), 200u) << "taken " << taken.size() << ", left to yaml-cpp " << left.size();
  const std::set<std::string> left_set(left.begin(), left.end());
  for (const auto& folder : {"hardware/", "scenarios/networks/", "scenarios/bench/", "examples/"})
    for (const auto& file : left_set) EXPECT_NE(file.rfind(folder, 0), 0u) << file << " was left to yaml-cpp";
}

TEST(PlainYaml, TextsInsideThePlainSubsetGiveYamlCppsTree) {
  const std::vector<std::string> inside = {
      "a: 1\n",
      "a: 1",
      "# header\nname: x\n\n  # an indented comment\nb: two words  # a comment\n",
      "m:\n  k: v\n  l:\n    deep: 3\nn: 4\n",
      "s:\n  - 1\n  - two\n  -   three\nt: [1, 2, 3]\n",
      "s:\n- 1\n- 2\nnext: 3\n",  // a sequence at its key's indentation
      "layers:\n  - {name: conv0, op: conv2d, kernel: 3}\n  - {name: relu0, op: relu}\n",
      "layers:\n  - name: a\n    op: relu\n  - name: b\n    op: add\n    inputs: [a, x]\n",
      "- a\n- b: 1\n  c: 2\n-\n  d: 3\n-\n  - e\n",
      "q: \"50 GB/s\"\nr: 'single'\n\"quoted key\": x\n",
      "d: \"1,000 layers: 500 x (3x3 convolution, ReLU)\"\n",
      "u: 3.5 µs\nv: café au lait\n",  // UTF-8 bytes: marks count bytes
      "url: http://example.com/a:b\nlist: a, b, c\n",
      "n1: ~\nn2: null\nn3: Null\nn4: NULL\nnot: nulls\n",
      "e: {}\nf: []\ng: {a: [1, {b: 2}], c: [[1, 2], []]}\n",
      "x: -1\ny: -.5\nz: .5\nw: +3\nk: -abc\n",
      "dup: 1\ndup: 2\n",
      "50 GB/s",
      "[1, 2]",
      "{a: 1}  # flow at the top\n",
      "a: 1\n   \n\nb: 2\n# trailing comment\n",
      "key: value   \n",
      "ops: [conv2d, linear,   # a comment inside\n      relu,\n\n      add]  # after\nnext: {a: 1,\n  b: [2,\n   "
      "3]}\n",
      "- {name: attn, op: attention, heads: 32,\n   causal: true}\n- x\n",
  };
  for (const auto& text : inside) EXPECT_TRUE(taken_and_same(text, text)) << "not taken:\n" << text;
}

TEST(PlainYaml, TextsOutsideThePlainSubsetOrNotYamlAreLeftToYamlCpp) {
  const std::vector<std::string> outside = {
      "",
      "# only a comment\n",
      "a:\n",                // an empty value (its mark is the next token's)
      "a:\nb: 1\n",          //
      "a: &x 1\nb: *x\n",    // anchors and aliases
      "a: !!str 1\n",        // a tag
      "a: |\n  block\n",     // block scalars
      "a: >\n  folded\n",    //
      "a: one\n  two\n",     // a multi-line plain scalar
      "a: \"esc\\n\"\n",     // an escape
      "a: 'it''s'\n",        //
      "a: [1,\n2]\n",        // a flow collection's line not indented past its block
      "a:\n\tb: 1\n",        // a tab
      "a: 1\r\nb: 2\r\n",    // carriage returns
      "a: b: c\n",           // not YAML
      "a: [1, 2\n",          //
      "a: {b: 1,}\n",        //
      "- a\nb: 1\n",         //
      "a: 1\n - b\n",        //
      "  a: 1\n",            // an indented first line
      "? complex\n: key\n",  //
      "a: *\n",              //
      "a: x#y\n",            // '#' inside a plain scalar
      "a: \"x\"#c\n",        //
      "- - a\n",             //
      "a: {b:1}\n",          //
      "...\n",               //
      "a: @x\n",             //
      "a: 1\n...\n",         //
  };
  for (const auto& text : outside) {
    EXPECT_FALSE(load_plain_yaml(text).has_value()) << "taken:\n" << text;
  }
}
