"""Write each role's README.md from its meta/argument_specs.yml, the source of truth.

usage: python3 scripts/role_readme.py [--check]
--check fails, naming the role, when a README differs from what the spec gives, or when a
spec default differs from the role's defaults/main.yml.
"""

import glob
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MISSING = object()
# Ansible doc markup (C(x), V(x), O(x), M(x), ...) becomes Markdown code.
MARKUP = re.compile(r"\b[CVOMIRE]\(([^)]*)\)")


def _text(value):
    text = " ".join(value) if isinstance(value, list) else str(value or "")
    return MARKUP.sub(r"`\1`", text)


def _cell(value):
    return _text(value).replace("|", "\\|").replace("\n", " ")


def _default(option):
    if "default" not in option:
        return "(required)" if option.get("required") else ""
    return "`%s`" % yaml.safe_dump(option["default"], default_flow_style=True).strip().replace("\n...", "")


def _rows(options, prefix=""):
    """A table row per option, each followed by the rows of its suboptions (``name[].sub``)."""
    rows = []
    for name, option in sorted(options.items()):
        kind = option.get("type", "str")
        if option.get("elements"):
            kind += " of " + option["elements"]
        description = _cell(" ".join(_text(option.get("description")).split()))
        rows.append("| `%s%s` | %s | %s | %s |" % (prefix, name, kind, _default(option), description))
        rows += _rows(option.get("options", {}), prefix + name + ("[]." if option.get("type") == "list" else "."))
    return rows


def render(role, spec):
    main = spec["argument_specs"]["main"]
    lines = [
        "# Role cephops.osd_tuning.%s" % role,
        "",
        "<!-- Generated from meta/argument_specs.yml by scripts/role_readme.py; edit the spec, not this file. -->",
        "",
        main["short_description"],
        "",
    ]
    lines += ["- %s" % " ".join(_text(d).split()) for d in main.get("description", [])]
    lines += [
        "",
        "## Variables",
        "",
        "| Variable | Type | Default | Description |",
        "| --- | --- | --- | --- |",
    ]
    lines += _rows(main.get("options", {}))
    lines += [
        "",
        "## Use",
        "",
        "```yaml",
        "- name: Apply %s" % role,
        "  hosts: osds",
        "  become: true",
        "  roles:",
        "    - role: cephops.osd_tuning.%s" % role,
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv):
    check, problems = "--check" in argv, []
    for spec_path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml"))):
        role_dir = os.path.dirname(os.path.dirname(spec_path))
        role = os.path.basename(role_dir)
        with open(spec_path) as handle:
            spec = yaml.safe_load(handle)
        defaults_path = os.path.join(role_dir, "defaults", "main.yml")
        with open(defaults_path) as handle:
            defaults = yaml.safe_load(handle) or {}
        options = spec["argument_specs"]["main"].get("options", {})
        spec_defaults = dict((n, o["default"]) for n, o in options.items() if "default" in o)
        drift = sorted(name for name in set(spec_defaults) | set(defaults)
                       if spec_defaults.get(name, MISSING) != defaults.get(name, MISSING))
        if drift:
            problems.append("%s: argument_specs defaults differ from defaults/main.yml for: %s"
                            % (role, ", ".join(drift)))
        readme_path = os.path.join(role_dir, "README.md")
        text = render(role, spec)
        current = open(readme_path).read() if os.path.exists(readme_path) else None
        if current != text:
            if check:
                problems.append("%s: README.md is out of date: run python3 scripts/role_readme.py" % role)
            else:
                with open(readme_path, "w") as handle:
                    handle.write(text)
    for problem in problems:
        sys.stderr.write(problem + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
