"""The package's nuspec, for scripts/lib/pack-dotnet.sh.

    nuspec.py full NUSPEC VERSION COMMIT      prints the nuspec the package ships
    nuspec.py legacy NUSPEC VERSION COMMIT    prints it without what NuGet 2.8 refuses
    nuspec.py replace PACKAGE.nupkg NUSPEC            puts NUSPEC in the package in place of its own

`full` fills in the version, the release notes (the section of CHANGELOG.md
for VERSION: an error if there is none), the repository's URL (Cargo.toml's
`repository`, if the workspace names one) and commit. `legacy` drops the
elements Debian's NuGet 2.8 does not know (license, repository, readme):
`nuget pack` validates against its own schema and refuses them.
"""

import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

NEWER_THAN_NUGET_2_8 = ("license", "repository", "readme")


def release_notes(version):
    text = Path("CHANGELOG.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(version)}\b[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not match or not match.group(1).strip():
        sys.exit(f"nuspec.py: CHANGELOG.md has no section '## {version}' for the release notes")
    return match.group(1).strip()


def workspace_repository():
    manifest = Path("Cargo.toml").read_text(encoding="utf-8")
    match = re.search(r'^repository\s*=\s*"([^"]+)"', manifest, re.M)
    return match.group(1) if match else None


def nuspec(path, version, commit, legacy):
    tree = ET.parse(path)
    metadata = tree.getroot().find("metadata")
    metadata.find("version").text = version
    metadata.find("releaseNotes").text = release_notes(version)
    repository = metadata.find("repository")
    url = workspace_repository()
    if url:
        repository.set("url", url)
    if commit:
        repository.set("commit", commit)
    if not legacy:
        # What nuget pack reads, not what a package's nuspec says.
        tree.getroot().remove(tree.getroot().find("files"))
    if legacy:
        for name in NEWER_THAN_NUGET_2_8:
            for element in metadata.findall(name):
                metadata.remove(element)
    return ET.tostring(tree.getroot(), encoding="unicode")


def replace(package, path):
    data = Path(path).read_bytes()
    with zipfile.ZipFile(package) as old:
        entries = [(info, old.read(info)) for info in old.infolist()]
    names = [info.filename for info, _ in entries if info.filename.endswith(".nuspec") and "/" not in info.filename]
    if len(names) != 1:
        sys.exit(f"nuspec.py: {package} holds {len(names)} nuspec files at its root, not 1")
    with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as new:
        for info, content in entries:
            new.writestr(info, data if info.filename == names[0] else content)


def main(argv):
    if len(argv) == 5 and argv[1] in ("full", "legacy"):
        print('<?xml version="1.0" encoding="utf-8"?>')
        print(nuspec(argv[2], argv[3], argv[4], argv[1] == "legacy"))
        return 0
    if len(argv) == 4 and argv[1] == "replace":
        replace(argv[2], argv[3])
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
