// `framesim compare A B`: two run folders or two budgets side by side (text, compare.json, report.html).
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "compare.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace framesim::cli {

namespace {

namespace fs = std::filesystem;

struct CompareArgs {
  std::string a, b, out;
  bool json = false;
};

int run_compare(const CompareArgs& args) {
  const auto a = analysis::load_compare_input(args.a);
  const auto b = analysis::load_compare_input(args.b);
  const auto c = analysis::compare_json(a, b);
  const fs::path out = args.out.empty()
                           ? fs::path("runs") / fmt::format("compare-{}-vs-{}", fs::path(args.a).stem().string(),
                                                            fs::path(args.b).stem().string())
                           : fs::path(args.out);
  // A run folder compared is an input even where compare does not read (its own report.html): never written into.
  for (const std::string& input : {args.a, args.b}) {
    std::error_code ec;
    if (fs::is_directory(input, ec) && fs::equivalent(input, out, ec))
      throw core::UserError(
          fmt::format("-o: {} is one of the run folders compared; its report.html would be "
                      "replaced: give another folder",
                      out.string()));
  }
  const std::string text = analysis::compare_text(c);
  // Whole or not at all: a full disk leaves no compare.json without its compare.txt and report.html.
  core::write_files_atomic(
      out,
      {{"compare.json", c.dump(2) + "\n"}, {"compare.txt", text}, {"report.html", analysis::compare_html(c, a, b)}},
      "-o");
  if (args.json) {
    std::cout << c.dump(2) << "\n";
  } else {
    std::cout << text << fmt::format("\ncompare folder: {}/ (compare.txt, compare.json, report.html)\n", out.string());
  }
  return 0;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* sub = app.add_subcommand("compare", "two run folders or two budgets side by side, with the differences' CIs");
  sub->add_option("a", args->a, "run folder (framesim run -o) or budget JSON (framesim budget --json)")->required();
  sub->add_option("b", args->b, "the other, of the same kind")->required();
  sub->add_option(
      "-o,--out", args->out,
      "folder for compare.txt, compare.json, report.html (default: runs/compare-<A>-vs-<B>, each the name of the "
      "folder or file without its extension)");
  sub->add_flag("--json", args->json, "print compare.json instead of the text");
  return {sub, [args] { return run_compare(*args); }};
}

}  // namespace framesim::cli
