// The examples (examples/README.md): every scenario in examples/*/ runs through `framesim run`, as a user
// would run it (and again with --exact), and every number its header derives by hand (`# expect:` lines, parsed by
// expect_lines.hpp) must come out of the run folder within the tolerance the header states. The header is the only
// place each number is written, so the test and the explanation cannot drift apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "engine/run_support.hpp"
#include "examples/expect_lines.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using framesim::examples::Expectation;
using framesim::examples::ExpectError;
using framesim::examples::parse_expectations;
using framesim::testing::read_table;
using framesim::testing::run_framesim;
using framesim::testing::Scratch;
using nlohmann::json;

const fs::path kExamples = fs::path(FRAMESIM_SOURCE_DIR) / "examples";

/// A scenario file has a top-level `hardware:` key; hardware and network files have none.
bool is_scenario(const fs::path& file) {
  static const std::regex top_level_hardware(R"((^|\n)hardware:)");
  return std::regex_search(framesim::core::read_file(file), top_level_hardware);
}

std::vector<fs::path> example_folders() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(kExamples))
    if (entry.is_directory()) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// Every scenario of every example folder, as "FOLDER/FILE.yaml", sorted (the reading order).
std::vector<std::string> example_scenarios() {
  std::vector<std::string> out;
  for (const auto& folder : example_folders())
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.path().extension() == ".yaml" && is_scenario(entry.path()))
        out.push_back(folder.filename().string() + "/" + entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool numbers_match(const std::string& a, const std::string& b) {
  const auto x = framesim::examples::detail::number(a);
  const auto y = framesim::examples::detail::number(b);
  return x && y && std::fabs(*x - *y) <= 1e-9 * std::max(1.0, std::fabs(*y));
}

/// The value an expectation names in the run folder, as JSON (a CSV cell becomes a number when it reads as
/// one). Fails the test and returns null when it is not there.
json select(const Expectation& e, const fs::path& folder, const json& summary) {
  if (e.csv) {
    const fs::path file = folder / e.csv->file;
    if (!fs::exists(file)) {
      ADD_FAILURE() << "line " << e.line << ": the run folder has no " << e.csv->file;
      return nullptr;
    }
    const auto table = read_table(file);
    std::vector<const std::map<std::string, std::string>*> rows;
    for (const auto& row : table.rows) {
      bool all = true;
      for (const auto& [column, value] : e.csv->match) {
        const auto it = row.find(column);
        all = all && it != row.end() && (it->second == value || numbers_match(it->second, value));
      }
      if (all) rows.push_back(&row);
    }
    if (rows.size() != 1) {
      ADD_FAILURE() << "line " << e.line << ": " << e.selector << " matches " << rows.size() << " rows, not one";
      return nullptr;
    }
    const auto cell = rows.front()->find(e.csv->column);
    if (cell == rows.front()->end()) {
      ADD_FAILURE() << "line " << e.line << ": " << e.csv->file << " has no column " << e.csv->column;
      return nullptr;
    }
    if (const auto v = framesim::examples::detail::number(cell->second)) return *v;
    return cell->second;
  }
  const json* node = &summary;
  for (const auto& key : e.json_path) {
    if (node->is_object() && node->contains(key)) {
      node = &(*node)[key];
    } else if (node->is_array() && !key.empty() && std::all_of(key.begin(), key.end(), ::isdigit) &&
               std::stoul(key) < node->size()) {
      node = &(*node)[std::stoul(key)];
    } else {
      ADD_FAILURE() << "line " << e.line << ": summary.json has no " << e.selector << " (stopped at \"" << key << "\")";
      return nullptr;
    }
  }
  return *node;
}

/// An example scenario ("FOLDER/FILE.yaml") and whether to run it with `--exact`: every kernel a SimGrid
/// activity instead of the fast path's own fluid solver (sim/engine/README.md, "The fast path"). Both paths
/// must reach the numbers the header derives.
class Example : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(Example, RunsToTheNumbersItsHeaderDerives) {
  const std::string& name = std::get<0>(GetParam());
  const fs::path scenario = kExamples / name;
  const auto expectations = parse_expectations(framesim::core::read_file(scenario), name);
  ASSERT_FALSE(expectations.empty()) << name << " has no `# expect:` line";
  Scratch s;
  const auto r = run_framesim(scenario, s.dir() / "out", std::get<1>(GetParam()) ? "--exact" : "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& e : expectations) {
    const json actual = select(e, r.folder, r.summary);
    if (actual.is_null()) continue;
    if (e.is_text) {
      const std::string text = actual.is_string() ? actual.get<std::string>() : actual.dump();
      EXPECT_NE(text.find(e.text), std::string::npos)
          << name << ":" << e.line << ": " << e.selector << " = " << text << " does not contain \"" << e.text << "\"";
      continue;
    }
    if (!actual.is_number()) {
      ADD_FAILURE() << name << ":" << e.line << ": " << e.selector << " is " << actual.dump() << ", not a number";
      continue;
    }
    const double v = actual.get<double>();
    EXPECT_LE(std::fabs(v - e.value), e.tolerance)
        << name << ":" << e.line << ": " << e.selector << " = " << fmt::format("{}", v) << ", the header derives "
        << fmt::format("{}", e.value) << " ± " << fmt::format("{}", e.tolerance);
  }
}

std::string test_name(const ::testing::TestParamInfo<std::tuple<std::string, bool>>& info) {
  const std::string& file = std::get<0>(info.param);
  std::string name = file.substr(0, file.size() - 5);  // without ".yaml"
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return std::get<1>(info.param) ? name + "_exact" : name;
}

INSTANTIATE_TEST_SUITE_P(Examples, Example,
                         ::testing::Combine(::testing::ValuesIn(example_scenarios()), ::testing::Bool()), test_name);

TEST(Examples, EveryFolderHasScenariosAndTheReadmeListsIt) {
  const std::string readme = framesim::core::read_file(kExamples / "README.md");
  const auto scenarios = example_scenarios();
  ASSERT_FALSE(example_folders().empty());
  for (const auto& folder : example_folders()) {
    const std::string name = folder.filename().string();
    EXPECT_TRUE(std::any_of(scenarios.begin(), scenarios.end(),
                            [&](const std::string& s) { return s.rfind(name + "/", 0) == 0; }))
        << name << " has no scenario";
    EXPECT_NE(readme.find("`" + name + "/`"), std::string::npos) << "examples/README.md does not list " << name;
  }
  for (const auto& s : scenarios)
    EXPECT_FALSE(parse_expectations(framesim::core::read_file(kExamples / s), s).empty()) << s << " expects nothing";
}

// The parser itself, on lines written here.
TEST(ExpectLines, ReadsNumbersTextsPathsAndCells) {
  const auto e = parse_expectations(R"(# Example: not an expectation
# expected numbers follow (prose, not an expectation)
# expect: windows.all.stages.sa.service_s.max = 0.020 ± 1e-9
#   expect: frames.drops_by."slow: queue_full" = 22 ± 0
# expect: stages.csv[stage=acc, frame=0].end_s = 0.0155 ± 0.01%
# expect: notes contains "replayed 2 of 2"
name: x
)",
                                    "t.yaml");
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].line, 3);
  EXPECT_EQ(e[0].json_path, (std::vector<std::string>{"windows", "all", "stages", "sa", "service_s", "max"}));
  EXPECT_EQ(e[0].value, 0.020);
  EXPECT_EQ(e[0].tolerance, 1e-9);
  EXPECT_EQ(e[1].json_path, (std::vector<std::string>{"frames", "drops_by", "slow: queue_full"}));
  EXPECT_EQ(e[1].tolerance, 0.0);
  ASSERT_TRUE(e[2].csv.has_value());
  EXPECT_EQ(e[2].csv->file, "stages.csv");
  EXPECT_EQ(e[2].csv->match, (std::vector<std::pair<std::string, std::string>>{{"stage", "acc"}, {"frame", "0"}}));
  EXPECT_EQ(e[2].csv->column, "end_s");
  EXPECT_DOUBLE_EQ(e[2].tolerance, 0.0155e-4);  // 0.01 % of the value
  EXPECT_TRUE(e[3].is_text);
  EXPECT_EQ(e[3].text, "replayed 2 of 2");
}

TEST(ExpectLines, RefusesWhatWouldDropOrWeakenACheck) {
  for (const char* bad : {"# expects: a.b = 1 ± 0",            // a typo in the keyword
                          "# Expect: a.b = 1 ± 0",             // another
                          "# expected : a.b = 1 ± 0",          // and another
                          "# expect: a.b = 1",                 // no tolerance
                          "# expect: a.b = one ± 0",           // not a number
                          "# expect: a.b = 1 ± -1",            // a negative tolerance
                          "# expect: a.b = 1 ± 0.5",           // looser than 2 % of the value
                          "# expect: a.b = 0 ± 1e-6",          // a zero value with room to hide a wrong one
                          "# expect: a.b == 1 ± 0",            // neither form
                          "# expect: a..b = 1 ± 0",            // an empty key
                          "# expect: a.\"b = 1 ± 0",           // an unclosed quote
                          "# expect: t.csv[frame].x = 1 ± 0",  // a row condition without a value
                          "# expect: t.csv[frame=0] = 1 ± 0",  // no column
                          "# expect: notes contains replayed"}) {
    EXPECT_THROW(parse_expectations(bad, "t.yaml"), ExpectError) << bad;
  }
}

}  // namespace
