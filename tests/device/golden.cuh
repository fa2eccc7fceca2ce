// tests/device/golden.cuh: the golden-file check of the host-only plan tests (tests/device/*_plan.cu).
// wk_golden_check(path, got): with WARPKIT_GOLDEN_WRITE set, first writes `got` to path; then expects
// got to equal the file's text, else fails naming the first line that differs (run from the
// repository root).
#pragma once

#include "../common.cuh"
#include <string>

/// The file's whole text in *s; false when it cannot be read.
static inline bool wk_read_file(const char* path, std::string* s) {
    FILE* f = fopen(path, "rb");
    if (!f) return false;
    char buf[65536];
    size_t n;
    s->clear();
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s->append(buf, n);
    fclose(f);
    return true;
}

/// The 1-based number of the first line where a and b differ, and both lines.
static inline int wk_first_diff(const std::string& a, const std::string& b, std::string* la, std::string* lb) {
    size_t i = 0, j = 0;
    for (int line = 1;; ++line) {
        const size_t ea = a.find('\n', i), eb = b.find('\n', j);
        *la = a.substr(i, ea == std::string::npos ? std::string::npos : ea - i);
        *lb = b.substr(j, eb == std::string::npos ? std::string::npos : eb - j);
        if (*la != *lb || ea == std::string::npos || eb == std::string::npos) return line;
        i = ea + 1;
        j = eb + 1;
    }
}

/// Compares got with the golden file at path (writing it first under WARPKIT_GOLDEN_WRITE).
static inline void wk_golden_check(const char* path, const std::string& got) {
    if (getenv("WARPKIT_GOLDEN_WRITE")) {
        FILE* f = fopen(path, "wb");
        cr_assert(f != nullptr, "cannot write %s (run from the repository root)", path);
        fwrite(got.data(), 1, got.size(), f);
        fclose(f);
    }
    std::string want;
    cr_assert(wk_read_file(path, &want), "cannot read %s (run from the repository root)", path);
    std::string la, lb;
    const int line = got == want ? 0 : wk_first_diff(got, want, &la, &lb);
    cr_expect(line == 0, "plans differ from %s at line %d:\n  now:    %s\n  golden: %s", path, line, la.c_str(),
              lb.c_str());
}
