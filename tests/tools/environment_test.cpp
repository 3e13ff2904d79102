// The environment-variable table (tools/environment.hpp) against the sources: every variable the code reads has a
// row, every row is read somewhere, and docs/environment.md carries the table as pgas-info prints it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "environment.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

const fs::path source_dir = PGAS_SOURCE_DIR;

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool is_source(const fs::path& p) {
    const auto ext = p.extension().string();
    return ext == ".hpp" || ext == ".cuh" || ext == ".cpp" || ext == ".cu" || ext == ".h";
}

// name -> first file that mentions it, for the failure message.
using found_names = std::map<std::string, std::string>;

void scan(const fs::path& dir, bool (*wanted)(const fs::path&), const std::regex& pattern, found_names& out) {
    if (!fs::exists(source_dir / dir)) return;
    for (const auto& entry : fs::recursive_directory_iterator(source_dir / dir)) {
        if (!entry.is_regular_file() || !wanted(entry.path())) continue;
        if (entry.path().filename() == "environment.hpp" && entry.path().parent_path().filename() == "tools") continue;
        const std::string text = read(entry.path());
        // The name is the pattern's last group; a match whose first of two groups matched is skipped (a symbol
        // name handed to dlsym, not a variable).
        for (std::sregex_iterator m(text.begin(), text.end(), pattern), end; m != end; ++m)
            if (m->size() == 2 || !(*m)[1].matched)
                out.emplace((*m)[m->size() - 1].str(), fs::relative(entry.path(), source_dir).string());
    }
}

// What the code reads. In the library and the tools every string literal shaped like a variable name
// (upper-case words joined by '_', e.g. "PGAS_HEAP_SIZE", "OMPI_MCA_ess_base_jobid") counts but a symbol looked up
// with dlsym (e.g. "MPI_Comm_rank"): pgas reads its variables by literal name, directly or through a name held in a
// local (host/bootstrap/launch_env.hpp). In
// bench/ and scripts/ only PGAS_* names count (the benchmarks set NVSHMEM_*/NCCL_* for the libraries they compare with).
found_names names_in_code() {
    found_names found;
    const std::regex literal(R"re((dlsym\(RTLD_DEFAULT, )?"([A-Z][A-Z0-9]*(?:_[A-Za-z0-9]+)+)")re");
    scan("include", is_source, literal, found);
    scan("src", is_source, literal, found);
    scan("tools", is_source, literal, found);
    scan("bench", is_source, std::regex(R"re("(PGAS_[A-Z0-9_]+)")re"), found);
    scan("scripts", [](const fs::path&) { return true; }, std::regex(R"re(\$\{?(PGAS_[A-Z0-9_]+))re"), found);
    return found;
}

// Every mention of a table name anywhere in the sources, as a quoted literal or a shell expansion.
bool mentioned(const std::string& name) {
    const std::string quoted = "\"" + name + "\"", shell1 = "$" + name, shell2 = "${" + name;
    for (const char* dir : {"include", "src", "tools", "bench", "scripts"})
        for (const auto& entry : fs::recursive_directory_iterator(source_dir / dir)) {
            if (!entry.is_regular_file()) continue;
            if (entry.path().filename() == "environment.hpp" && entry.path().parent_path().filename() == "tools") continue;
            const std::string text = read(entry.path());
            if (text.find(quoted) != std::string::npos || text.find(shell1) != std::string::npos ||
                text.find(shell2) != std::string::npos)
                return true;
        }
    return false;
}

}  // namespace

TEST_CASE("every variable the code reads is in the table") {
    std::set<std::string> table;
    for (const auto& v : pgas_tools::env_vars()) table.insert(std::string(v.name));
    for (const auto& [name, file] : names_in_code()) {
        INFO(file << " reads " << name << ": add a row for it to tools/environment.hpp");
        CHECK(table.count(name) == 1);
    }
}

TEST_CASE("every variable in the table is read by the code") {
    std::set<std::string> seen;
    for (const auto& v : pgas_tools::env_vars()) {
        const std::string name(v.name);
        INFO(name << " is in tools/environment.hpp but nothing reads it: remove the row");
        CHECK(mentioned(name));
        INFO(name << " has two rows");
        CHECK(seen.insert(name).second);
        INFO(name << ": a cell holds '|', which breaks the Markdown table");
        for (auto cell : {v.default_value, v.range, v.reader, v.meaning}) CHECK(cell.find('|') == std::string_view::npos);
    }
}

TEST_CASE("docs/environment.md carries the table as pgas-info --env-markdown prints it") {
    const std::string doc = read(source_dir / "docs" / "environment.md");
    const std::string begin = "<!-- BEGIN pgas-info --env-markdown -->\n", end = "<!-- END pgas-info --env-markdown -->";
    const auto b = doc.find(begin), e = doc.find(end);
    REQUIRE_MESSAGE(b != std::string::npos, "docs/environment.md lacks the line " << begin);
    REQUIRE_MESSAGE(e != std::string::npos, "docs/environment.md lacks the line " << end);
    std::ostringstream table;
    pgas_tools::write_env_markdown(table);
    INFO("regenerate it: build/tools/pgas-info --env-markdown, pasted between the markers");
    CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == table.str());
}
