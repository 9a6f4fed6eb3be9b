#!/usr/bin/env python3
"""Compile every C++, C and Fortran snippet of README.md and docs/*.md, and run the complete ones.

Run by the ctest test tlc_doc_snippets (tests/docs/CMakeLists.txt), which passes a JSON file of
the build's compilers, include paths and libraries. A snippet is a fenced block opened by
```cpp, ```c or ```fortran; other fences (```sh, ```cmake, plain ```) are not code to compile.

- A complete program (C/C++ with a main function, Fortran with a `program` statement) is
  compiled, linked against the build's libtlc and run under mpiexec -n 1 (TLC_NODE=process).
- A fragment is compiled only. One without #include lines gets <tlc/tlc.hpp> (C: <tlc/tlc.h>);
  one with them gets exactly those, so a missing header fails as it would for a reader. A fragment that defines functions is compiled at file scope; one that is a sequence of
  statements is wrapped into the body of `void tlc_snippet(int argc, char** argv)` (its
  #include lines go to the top of the file).
- OpenMP snippets (`#pragma omp`, `omp_`, `use omp_lib`, tlc/openmp.hpp) get -fopenmp.
- An HTML comment on the line just before the fence gives directives, separated by `;`:
    <!-- snippet: given: long n = 0; const double* x = nullptr -->
        declarations placed before the fragment (everything after `given:`)
    <!-- snippet: skip: <reason> -->
        not compiled; the reason is mandatory (pseudo-code, a shell transcript in a cpp fence)
Exits 1 if any snippet fails, naming the file and line of its fence, with the compiler's output.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(cpp|c\+\+|c|fortran)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*snippet:\s*(.*?)\s*-->\s*$")
FUNCTION_DEFINITION = re.compile(r"^[A-Za-z_][\w:<>,\s\*&]*\s[\*&]?\w+\s*\([^;]*\)\s*(const\s*)?\{")


def snippets(path):
    """(line of the fence, language, code, directive text or None) of every snippet in path."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].startswith("```"):  # another language: skip to its closing fence
                i += 1
                while i < len(lines) and not lines[i].startswith("```"):
                    i += 1
            i += 1
            continue
        directive = None
        if i > 0:
            d = DIRECTIVE.match(lines[i - 1])
            if d:
                directive = d.group(1)
        start = i + 1
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        yield start, m.group(1).replace("c++", "cpp"), "\n".join(lines[start:i]) + "\n", directive
        i += 1


def parse_directive(text):
    given, skip = "", None
    if text:
        if text.startswith("given:"):
            given = text[len("given:"):].strip()
            if given and not given.endswith(";"):
                given += ";"
        elif text.startswith("skip:"):
            skip = text[len("skip:"):].strip()
            if not skip:
                raise ValueError("'snippet: skip:' needs a reason")
        else:
            raise ValueError("unknown snippet directive '%s' (given: ... or skip: <reason>)" % text)
    return given, skip


def uses_openmp(code):
    return bool(re.search(r"#pragma omp|\bomp_|use omp_lib|tlc/openmp\.hpp", code))


def is_complete(language, code):
    if language == "fortran":
        return re.search(r"^\s*program\s+\w+", code, re.M | re.I) is not None
    return re.search(r"\bint\s+main\s*\(", code) is not None


def wrap(language, code, given):
    """The source file of a fragment."""
    lines = code.split("\n")
    includes = [l for l in lines if l.startswith("#include")]
    # A fragment that names its headers gets those alone, so that a missing one fails as it
    # would for a reader; one without any gets tlc's umbrella header.
    header = "" if includes else ("#include <tlc/tlc.h>\n" if language == "c" else
                                  "#include <tlc/tlc.hpp>\n")
    rest = [l for l in lines if not l.startswith("#include")]
    first = next((l for l in rest if l.strip() and not l.strip().startswith(("//", "/*", "#"))), "")
    if not first or FUNCTION_DEFINITION.match(first):  # definitions (or only preprocessor lines)
        return header + "\n".join(includes) + "\n" + given + "\n" + "\n".join(rest)
    return (header + "\n".join(includes) + "\n" +
            "void tlc_snippet(int argc, char** argv) {\n(void)argc; (void)argv;\n" + given +
            "\n" + "\n".join(rest) + "\n}\n")


def run(command, cwd, env=None, timeout=300):
    p = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, " ".join(command) + "\n" + p.stdout


def check(config, language, code, given, work):
    """None if the snippet compiles (and, when complete, links and runs), else the output."""
    complete = is_complete(language, code)
    openmp = ["-fopenmp"] if uses_openmp(code) else []
    includes = ["-I" + d for d in config["include_dirs"]]
    ext = {"cpp": ".cpp", "c": ".c", "fortran": ".f90"}[language]
    source = os.path.join(work, "snippet" + ext)
    obj = os.path.join(work, "snippet.o")
    if language == "fortran":
        text = code  # Fortran fragments are not wrapped: compiled as they stand
        compile_cmd = [config["fc"], "-c", source, "-o", obj, "-J", work] + includes + openmp
    elif language == "c":
        text = code if complete else wrap(language, code, given)
        compile_cmd = [config["cc"], "-std=c11", "-c", source, "-o", obj] + includes + openmp
    else:
        text = code if complete else wrap(language, code, given)
        compile_cmd = [config["cxx"], "-std=c++20", "-c", source, "-o", obj] + includes + openmp
    with open(source, "w", encoding="utf-8") as f:
        f.write(text)
    rc, out = run(compile_cmd, work)
    if rc != 0:
        return "compile failed:\n" + out
    if not complete:
        return None
    exe = os.path.join(work, "snippet")
    libs = ([config["tlc_fortran"]] if language == "fortran" else []) + [config["tlc"]]
    libdirs = sorted({os.path.dirname(l) for l in libs})
    link_cmd = ([config["cxx"], obj, "-o", exe] + openmp + libs + config["link_libraries"] +
                ["-Wl,-rpath," + d for d in libdirs] + ["-pthread"])
    if language == "fortran":
        link_cmd += config["fortran_runtime"]
    rc, out = run(link_cmd, work)
    if rc != 0:
        return "link failed:\n" + out
    env = dict(os.environ)
    env.update(config["environment"])
    rc, out = run(config["mpiexec"] + [exe], work, env=env)
    if rc != 0:
        return "run failed (exit %d):\n%s" % (rc, out)
    return None


def main():
    if len(sys.argv) < 3:
        print("usage: check_snippets.py <config.json> <markdown files...>", file=sys.stderr)
        return 2
    config = json.load(open(sys.argv[1], encoding="utf-8"))
    failures, checked, skipped = [], 0, 0
    for path in sys.argv[2:]:
        name = os.path.relpath(path, config["source_dir"])
        for line, language, code, directive in snippets(path):
            where = "%s:%d (%s)" % (name, line, language)
            try:
                given, skip = parse_directive(directive)
            except ValueError as e:
                failures.append((where, str(e)))
                continue
            if skip is not None:
                print("skipped  %s: %s" % (where, skip))
                skipped += 1
                continue
            if language == "fortran" and not config["fc"]:
                print("skipped  %s: no Fortran module in this build" % where)
                skipped += 1
                continue
            with tempfile.TemporaryDirectory(prefix="tlc-snippet-") as work:
                error = check(config, language, code, given, work)
            checked += 1
            kind = "program" if is_complete(language, code) else "fragment"
            if error:
                failures.append((where, error))
                print("FAILED   %s %s" % (where, kind))
            else:
                print("ok       %s %s%s" % (where, kind, ", ran" if kind == "program" else ""))
    for where, error in failures:
        print("\n--- %s ---\n%s" % (where, error))
    print("\n%d snippets checked, %d skipped, %d failed" % (checked, skipped, len(failures)))
    if checked == 0:
        print("no snippet found: is the extraction broken?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
