// run_command_line: CLI11 parses, each subcommand prints through the cache listing, the
// table and the report page.
#include "cli/command_line.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <ostream>
#include <string>

#include "cli/cache_listing.hpp"
#include "cli/cli_error.hpp"
#include "cli/log_view.hpp"
#include "cli/output_file.hpp"
#include "report/readable_text.hpp"
#include "cli/record_table.hpp"
#include "cli/report_page.hpp"
#include "disttune/fingerprint.hpp"
#include "disttune/report.hpp"
#include "disttune/store.hpp"

namespace disttune::cli {
namespace {

namespace fs = std::filesystem;

// What the subcommands read from the command line.
struct Arguments {
  std::string root;
  std::string function;
  std::string file_or_id;
  std::string file;
  std::string older_than;
  bool yes = false;
  bool force = false;
};

std::string bad_line(const ListedRecord& listed) {
  return detail::readable_text(listed.file.function) + "/" + detail::readable_text(listed.file.path.filename().string()) +
         ": " + detail::readable_text(listed.read.error);
}

int run_list(const CacheListing& cache, const Arguments& a, std::ostream& out) {
  for (const ListedRecord& listed : cache.records(a.function)) {
    if (!listed.read.record) {
      out << "BAD " << bad_line(listed) << '\n';
      continue;
    }
    const Record& record = *listed.read.record;
    out << record.id.function_name << "  " << record.id.file_id().substr(0, 12) << "  key "
        << record.id.key << "  best " << record.candidates.at(record.best_index).config
        << "  ranks " << record.ranks << "  " << record.created_utc << '\n';
  }
  return 0;
}

int run_show(const CacheListing& cache, const Arguments& a, std::ostream& out) {
  const fs::path path = cache.resolve(a.file_or_id);
  if (is_tuning_log(path)) {
    show_log(path, out);
    return 0;
  }
  const RecordRead read = read_record(path);
  if (!read.record) {
    throw CliError("bad record " + detail::readable_text(path.string()) + ": " + detail::readable_text(read.error));
  }
  const Record& record = *read.record;
  TuningReport report = report_of_record(record, TuningReport::Source::disk);
  report.record_path = detail::readable_text(path.string());
  out << format_table(report);
  const Measurement& m = record.measurement;
  out << "  hardware: " << canonical_json(record.hardware) << " (digest "
      << record.id.hardware_digest << ")\n"
      << "  deps: " << canonical_json(record.deps) << '\n'
      << "  function digest: " << record.id.function_digest << '\n'
      << "  measurement: warmup_runs " << m.warmup_runs << ", timed_runs " << m.timed_runs
      << ", statistic " << to_string(m.statistic) << ", strategy " << m.strategy << ", flush_l2 "
      << (record.flush_l2 ? "true" : "false") << '\n'
      << "  ranks " << record.ranks << ", created " << record.created_utc << ", library "
      << record.library_version << '\n';
  return 0;
}

int run_verify(const CacheListing& cache, std::ostream& out) {
  std::size_t checked = 0, bad = 0;
  for (const ListedRecord& listed : cache.records("")) {
    ++checked;
    if (listed.read.record) continue;
    ++bad;
    out << "BAD " << detail::readable_text(listed.file.path.string()) << ": " << detail::readable_text(listed.read.error)
        << '\n';
  }
  out << checked << " record files checked, " << checked - bad << " good, " << bad << " bad\n";
  return bad == 0 ? 0 : 1;
}

int run_clear(const CacheListing& cache, const Arguments& a, std::ostream& out) {
  if (!a.yes) throw CliError("clear removes records; refusing without --yes");
  const std::chrono::seconds older_than =
      a.older_than.empty() ? std::chrono::seconds(0) : parse_age(a.older_than);
  std::size_t total = 0;
  for (const auto& [function, removed] : cache.clear(a.function, older_than)) {
    out << "removed " << removed << " files of " << detail::readable_text(function) << '\n';
    total += removed;
  }
  out << "removed " << total << " files in all\n";
  return 0;
}

int run_export(const CacheListing& cache, const Arguments& a, std::ostream& out, std::ostream& err) {
  std::vector<Record> records;
  for (ListedRecord& listed : cache.records("")) {
    if (listed.read.record) {
      records.push_back(std::move(*listed.read.record));
    } else {
      err << "skipped BAD " << bad_line(listed) << '\n';
    }
  }
  write_output_file(a.file, make_table(records).dump(1) + "\n");
  out << "exported " << records.size() << " records to " << detail::readable_text(a.file) << '\n';
  return 0;
}

int run_import(const CacheListing& cache, const Arguments& a, const FrontEnd& front_end,
               std::ostream& out) {
  TableExpectation expected = host_expectation();
  expected.software.update(front_end.software);
  for (const std::string& line : import_table(cache, a.file, a.force, expected)) out << line << '\n';
  return 0;
}

int run_report(const CacheListing& cache, const Arguments& a, std::ostream& out) {
  const std::vector<ListedRecord> listed = cache.records(a.function);
  std::size_t bad = 0;
  for (const ListedRecord& entry : listed) bad += entry.read.record ? 0 : 1;
  write_output_file(a.file, report_page(detail::readable_text(cache.root().string()), listed));
  out << "wrote " << detail::readable_text(a.file) << ": " << listed.size() - bad << " records, " << bad
      << " bad files\n";
  return 0;
}

}  // namespace

int run_command_line(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                     const FrontEnd& front_end) {
  // An extra command gets every argument after its name, options included, unparsed.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--root") {
      ++i;
      continue;
    }
    if (args[i].starts_with("--root=")) continue;
    for (const ExtraCommand& command : front_end.extra_commands) {
      if (args[i] == command.name) return command.run({args.begin() + i + 1, args.end()});
    }
    break;
  }
  CLI::App app{"disttune: inspect, move and clear the disk cache of tuning records", "disttune"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", "disttune " + library_version());
  Arguments a;
  app.add_option("--root", a.root,
                 "cache root (default: TRITON_DIST_AUTOTUNE_CACHE_DIR or ~/.triton_dist/autotune)");

  CLI::App* list = app.add_subcommand("list", "one line per record (bad ones as BAD)");
  list->add_option("function", a.function, "only this function's records");
  CLI::App* show = app.add_subcommand("show", "one record as a table, with its fingerprints");
  show->add_option("file_or_id", a.file_or_id,
                   "a record file or a unique prefix of its id; or a tuning's log (NAME.log-UTC), printed")
      ->required();
  CLI::App* verify =
      app.add_subcommand("verify", "check that every record file is a valid schema-1 record");
  CLI::App* clear = app.add_subcommand("clear", "remove the records and logs of one function or all");
  clear->add_option("function", a.function, "only this function's files");
  clear->add_flag("--yes", a.yes, "really remove them");
  clear->add_option("--older-than", a.older_than,
                    "only entries last modified longer ago than this, e.g. 30d, 12h, 90m, 45s");
  CLI::App* export_ =
      app.add_subcommand("export", "write every record under the root into one table (JSON)");
  export_->add_option("file", a.file, "the table to write")->required();
  CLI::App* import_ =
      app.add_subcommand("import", "write a table's records under the root (all checked first)");
  import_->add_option("file", a.file, "a table written by `disttune export` or a sweep")->required();
  import_->add_flag("--force", a.force, "replace records on disk even when they are newer");
  CLI::App* report =
      app.add_subcommand("report", "write an HTML page with each config's timing samples plotted");
  report->add_option("file", a.file, "the page to write, e.g. report.html")->required();
  report->add_option("--function", a.function, "only this function's records");
  for (const ExtraCommand& command : front_end.extra_commands) {
    app.add_subcommand(command.name, command.help);  // listed in --help; run above
  }

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error, out, err);  // --help, --version
    err << "disttune: error: " << detail::readable_text(error.what()) << '\n';
    return 2;
  }
  try {
    const CacheListing cache(a.root.empty() ? default_cache_root() : fs::path(a.root));
    if (list->parsed()) return run_list(cache, a, out);
    if (show->parsed()) return run_show(cache, a, out);
    if (verify->parsed()) return run_verify(cache, out);
    if (clear->parsed()) return run_clear(cache, a, out);
    if (export_->parsed()) return run_export(cache, a, out, err);
    if (import_->parsed()) return run_import(cache, a, front_end, out);
    if (report->parsed()) return run_report(cache, a, out);
  } catch (const std::exception& error) {
    out.flush();
    err << "disttune: error: " << detail::readable_text(error.what()) << '\n';
  }
  return 1;
}

}  // namespace disttune::cli
