// run_command: each subcommand over the cache prints through the cache listing, the table and
// the report page; replay runs in cli/replay_command.cpp.
#include "cli/command_line.hpp"

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
#include "cli/record_table.hpp"
#include "cli/replay_command.hpp"
#include "cli/report_page.hpp"
#include "disttune/fingerprint.hpp"
#include "disttune/report.hpp"
#include "disttune/store.hpp"
#include "report/readable_text.hpp"

namespace disttune::cli {
namespace {

namespace fs = std::filesystem;

int run_list(const CacheListing& cache, const CommandArguments& a, std::ostream& out) {
  for (const ListedRecord& listed : cache.records(a.text("function"))) {
    if (!listed.read.record) {
      out << "BAD " << bad_record_line(listed) << '\n';
      continue;
    }
    const Record& record = *listed.read.record;
    out << record.id.function_name << "  " << record.id.file_id().substr(0, 12) << "  key "
        << record.id.key << "  best " << record.candidates.at(record.best_index).config
        << "  ranks " << record.ranks << "  " << record.created_utc << '\n';
  }
  return 0;
}

int run_show(const CacheListing& cache, const CommandArguments& a, std::ostream& out) {
  const fs::path path = cache.resolve(a.text("file_or_id"));
  if (is_tuning_log(path)) {
    show_log(path, out);
    return 0;
  }
  const RecordRead read = read_record(path);
  if (!read.record) {
    throw CliError("bad record " + detail::readable_text(path.string()) + ": " + detail::readable_text(read.error));
  }
  const Record& record = *read.record;
  TuningReport report = report_of_record(record, DiskStore::kSource);
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

int run_clear(const CacheListing& cache, const CommandArguments& a, std::ostream& out) {
  if (!a.flag("--yes")) throw CliError("clear removes records; refusing without --yes");
  const std::string age = a.text("--older-than");
  const std::chrono::seconds older_than = age.empty() ? std::chrono::seconds(0) : parse_age(age);
  std::size_t total = 0;
  for (const auto& [function, removed] : cache.clear(a.text("function"), older_than)) {
    out << "removed " << removed << " files of " << detail::readable_text(function) << '\n';
    total += removed;
  }
  out << "removed " << total << " files in all\n";
  return 0;
}

int run_export(const CacheListing& cache, const CommandArguments& a, std::ostream& out, std::ostream& err) {
  const std::string file = a.text("file");
  const std::size_t exported = export_table(cache, file, err);
  out << "exported " << exported << " records to " << detail::readable_text(file) << '\n';
  return 0;
}

int run_import(const CacheListing& cache, const CommandArguments& a, const FrontEnd& front_end,
               std::ostream& out) {
  TableExpectation expected = host_expectation();
  expected.software.update(front_end.software);
  for (const std::string& line : import_table(cache, a.text("file"), a.flag("--force"), expected)) out << line << '\n';
  return 0;
}

int run_report(const CacheListing& cache, const CommandArguments& a, std::ostream& out) {
  const std::string file = a.text("file");
  const std::vector<ListedRecord> listed = cache.records(a.text("--function"));
  std::size_t bad = 0;
  for (const ListedRecord& entry : listed) bad += entry.read.record ? 0 : 1;
  write_output_file(file, report_page(detail::readable_text(cache.root().string()), listed));
  out << "wrote " << detail::readable_text(file) << ": " << listed.size() - bad << " records, " << bad
      << " bad files\n";
  return 0;
}

}  // namespace

int run_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err,
                const FrontEnd& front_end) {
  try {
    const CommandArguments arguments(parsed);
    if (arguments.command() == "replay") return run_replay(arguments, out);
    const std::string root = arguments.text("--root");
    const CacheListing cache(root.empty() ? default_cache_root() : fs::path(root));
    const std::string& command = arguments.command();
    if (command == "list") return run_list(cache, arguments, out);
    if (command == "show") return run_show(cache, arguments, out);
    if (command == "verify") return run_verify(cache, out);
    if (command == "clear") return run_clear(cache, arguments, out);
    if (command == "export") return run_export(cache, arguments, out, err);
    if (command == "import") return run_import(cache, arguments, front_end, out);
    if (command == "report") return run_report(cache, arguments, out);
    throw CliError("the command table names '" + command + "', which has no runner");
  } catch (const ArgumentError& error) {
    err << "disttune: error: " << detail::readable_text(error.what()) << '\n';
    return 2;
  } catch (const std::exception& error) {
    out.flush();
    err << "disttune: error: " << detail::readable_text(error.what()) << '\n';
  }
  return 1;
}

}  // namespace disttune::cli
