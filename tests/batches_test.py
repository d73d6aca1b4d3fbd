#!/usr/bin/env python3
"""scripts/batches.py: which files may be compiled as one (ctest Batches.*)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "batches.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import batches  # noqa: E402


class Tree:
    def __init__(self, files):
        self.dir = tempfile.TemporaryDirectory()
        self.top = self.dir.name
        for name, text in files.items():
            with open(os.path.join(self.top, name), "w", encoding="utf-8") as f:
                f.write(text)

    def plan(self, *names, size=8):
        sources = [batches.Source(os.path.join(self.top, n), self.top) for n in names]
        return [[m.relative for m in b] for b in batches.plan(sources, size)]


ANON = """namespace tilestream {
namespace {
constexpr int kWidth = 640, kFrames = 30;
struct Helper {};
}  // namespace
}  // namespace tilestream
"""
USES_FRAMES = """namespace tilestream {
namespace {
int Count() { return kFrames; }  // a header's kFrames
}  // namespace
}  // namespace tilestream
"""
PLAIN = """namespace tilestream {
namespace {
int Other() { return 1; }
}  // namespace
}  // namespace tilestream
"""


class Planning(unittest.TestCase):
    def test_a_name_one_file_declares_and_the_next_uses_keeps_them_apart(self):
        t = Tree({"a.cpp": ANON, "b.cpp": USES_FRAMES, "c.cpp": PLAIN})
        self.assertEqual(t.plan("a.cpp", "b.cpp", "c.cpp"), [["a.cpp", "c.cpp"], ["b.cpp"]])

    def test_the_second_of_a_later_declarator_list_counts(self):
        t = Tree({"a.cpp": ANON, "b.cpp": "int F() { return kWidth; }\n"})
        self.assertEqual(len(t.plan("a.cpp", "b.cpp")), 2)

    def test_macros_statics_and_aliases_count_names_in_comments_do_not(self):
        t = Tree({
            "m.cpp": "#define SCALE 2\n",
            "s.cpp": "static int Twice(int x) { return x * 2; }\n",
            "u.cpp": "namespace tilestream {\nusing Ms = int;\n}  // namespace tilestream\n",
            "uses.cpp": "int F() { return SCALE; }\n",
            "twice.cpp": "int G() { return Twice(2); }\n",
            "ms.cpp": "using Ms = long;\n",
            "says.cpp": "// SCALE, Twice and Ms only in a comment\nconst char* k = \"Twice\";\n",
        })
        plan = t.plan("m.cpp", "s.cpp", "u.cpp", "uses.cpp", "twice.cpp", "ms.cpp", "says.cpp")
        together = {f: next(i for i, b in enumerate(plan) if f in b) for b in plan for f in b}
        self.assertNotEqual(together["m.cpp"], together["uses.cpp"])
        self.assertNotEqual(together["s.cpp"], together["twice.cpp"])
        self.assertNotEqual(together["u.cpp"], together["ms.cpp"])
        self.assertEqual(together["m.cpp"], together["says.cpp"])

    def test_a_repeated_using_declaration_is_no_clash(self):
        using = "using testing::HasSubstr;\nint F();\n"
        t = Tree({"a.cpp": using, "b.cpp": using + "int G() { return HasSubstr; }\n"})
        self.assertEqual(t.plan("a.cpp", "b.cpp"), [["a.cpp", "b.cpp"]])

    def test_a_header_one_includes_may_hide_what_the_other_meant(self):
        # Once, a header's `tilestream::testing` hid GoogleTest's `testing`
        # from a test compiled after its includer (a compile error, luckily).
        t = Tree({
            "support.h": "namespace tilestream::testing {\nvoid Shell();\n}  // namespace tilestream::testing\n",
            "a.cpp": '#include "support.h"\nnamespace tilestream {\nvoid A() { testing::Shell(); }\n}  // namespace tilestream\n',
            "b.cpp": "namespace tilestream {\nclass T : public testing::Test {};\n}  // namespace tilestream\n",
            "c.cpp": "namespace tilestream {\nclass T : public ::testing::Test {};\n}  // namespace tilestream\n",
            "d.cpp": '#include "support.h"\nvoid D() { tilestream::testing::Shell(); }\n',
        })
        self.assertEqual(t.plan("a.cpp", "b.cpp"), [["a.cpp"], ["b.cpp"]])
        self.assertEqual(t.plan("a.cpp", "c.cpp", "d.cpp"), [["a.cpp", "c.cpp", "d.cpp"]])

    def test_a_qualified_name_or_a_member_is_no_clash(self):
        t = Tree({"a.cpp": ANON, "b.cpp": "int F(S s) { return s.kFrames + other::kFrames + p->kWidth; }\n"})
        self.assertEqual(t.plan("a.cpp", "b.cpp"), [["a.cpp", "b.cpp"]])

    def test_a_using_directive_compiles_alone(self):
        t = Tree({"a.cpp": "using namespace tilestream;\n", "b.cpp": PLAIN, "c.cpp": PLAIN.replace("Other", "Third")})
        self.assertEqual(t.plan("a.cpp", "b.cpp", "c.cpp"), [["a.cpp"], ["b.cpp", "c.cpp"]])

    def test_batches_hold_at_most_size_files(self):
        files = {f"f{i}.cpp": PLAIN.replace("Other", f"Other{i}") for i in range(5)}
        t = Tree(files)
        self.assertEqual([len(b) for b in t.plan(*files, size=2)], [2, 2, 1])


class Files(unittest.TestCase):
    def test_batch_files_include_from_the_top_and_the_database_expands_them(self):
        t = Tree({"a.cpp": PLAIN, "b.cpp": PLAIN.replace("Other", "Third"), "c.cpp": USES_FRAMES,
                  "d.cpp": ANON})
        out = os.path.join(t.top, "build", "batches")
        planned = subprocess.run(
            [sys.executable, SCRIPT, "plan", "--top", t.top, "--out", out, "lib:"]
            + [os.path.join(t.top, f) for f in ("a.cpp", "b.cpp", "c.cpp", "d.cpp")],
            check=True, capture_output=True, text=True).stdout
        name, compiled = planned.strip().split("\t")
        self.assertEqual(name, "lib")
        batch = os.path.join(out, "lib_1.cpp")
        self.assertEqual(compiled.split(","), [batch, os.path.join(t.top, "d.cpp")])
        with open(batch, encoding="utf-8") as f:
            self.assertEqual(f.read().splitlines()[1:],
                             ['#include "../../a.cpp"', '#include "../../b.cpp"', '#include "../../c.cpp"'])
        build = os.path.join(t.top, "build")
        with open(os.path.join(build, "compile_commands.json"), "w", encoding="utf-8") as f:
            json.dump([{"directory": build, "file": batch, "command": f"c++ -c {batch}"}], f)
        subprocess.run([sys.executable, SCRIPT, "database", build, os.path.join(t.top, "db")], check=True)
        with open(os.path.join(t.top, "db", "compile_commands.json"), encoding="utf-8") as f:
            expanded = json.load(f)
        self.assertEqual([e["file"] for e in expanded], [os.path.join(t.top, n) for n in ("a.cpp", "b.cpp", "c.cpp")])
        self.assertTrue(expanded[0]["command"].endswith(os.path.join(t.top, "a.cpp")))


if __name__ == "__main__":
    unittest.main()
