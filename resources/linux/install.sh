#!/bin/sh
# Install WeClaw for the current user, without root:
#   the app in ~/.local/lib/weclaw, the command ~/.local/bin/weclaw, a menu entry, icons and AppStream data.
#
#   ./install.sh              install (or update) from this folder
#   ./install.sh --uninstall  remove it again (your chats and settings stay where they are)
#   ./install.sh --prefix DIR install under DIR instead of ~/.local
set -eu

here=$(cd "$(dirname "$0")" && pwd)
prefix="${HOME}/.local"
action=install
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --uninstall) action=uninstall; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
if [ "$prefix" = "${HOME}/.local" ]; then data="${XDG_DATA_HOME:-$prefix/share}"; else data="$prefix/share"; fi

app_dir="$prefix/lib/weclaw"
bin="$prefix/bin/weclaw"
desktop="$data/applications/weclaw-desktop.desktop"
metainfo="$data/metainfo/app.weclaw.WeClaw.metainfo.xml"
icon_sizes="128 256 512"

refresh_caches() {
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" 2>/dev/null || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -f -t "$data/icons/hicolor" 2>/dev/null || true
}

if [ "$action" = uninstall ]; then
  rm -rf "$app_dir"
  [ -L "$bin" ] && rm -f "$bin"
  rm -f "$desktop" "$metainfo" "$data/icons/hicolor/scalable/apps/weclaw-desktop.svg"
  for size in $icon_sizes; do rm -f "$data/icons/hicolor/${size}x${size}/apps/weclaw-desktop.png"; done
  refresh_caches
  echo "WeClaw removed from $prefix. Your chats and settings are kept (delete ~/.local/share/WeClaw and ~/.config/WeClaw to remove them too)."
  exit 0
fi

if [ ! -x "$here/weclaw" ] || [ ! -d "$here/_internal" ]; then
  echo "install.sh: run me from the unpacked WeClaw folder (weclaw and _internal/ next to me)" >&2
  exit 1
fi
if ! version=$("$here/weclaw" --version 2>&1); then
  echo "install.sh: WeClaw does not start on this system:" >&2
  echo "$version" >&2
  echo "(it needs glibc $(cat "$here/share/weclaw/glibc-floor" 2>/dev/null || echo 2.35) or newer: Ubuntu 22.04, Debian 12, Fedora 36, RHEL 10 or later)" >&2
  exit 1
fi

mkdir -p "$prefix/lib" "$prefix/bin" "$data/applications" "$data/metainfo" "$data/icons/hicolor/scalable/apps"
# copy next to the old version, then swap, so a failed copy never leaves a half-installed app
rm -rf "$app_dir.new"
mkdir -p "$app_dir.new"
cp -RP "$here/weclaw" "$here/_internal" "$app_dir.new/"
if [ -d "$app_dir" ]; then rm -rf "$app_dir.old"; mv "$app_dir" "$app_dir.old"; fi
mv "$app_dir.new" "$app_dir"
rm -rf "$app_dir.old"
ln -sf "$app_dir/weclaw" "$bin"

sed -e "s|@EXEC@|\"$app_dir/weclaw\"|" -e "s|^Icon=.*|Icon=weclaw-desktop|" "$here/share/applications/weclaw-desktop.desktop" > "$desktop"
printf 'TryExec=%s\n' "$app_dir/weclaw" >> "$desktop"
chmod 644 "$desktop"
cp "$here/share/metainfo/app.weclaw.WeClaw.metainfo.xml" "$metainfo"
cp "$here/share/icons/hicolor/scalable/apps/weclaw-desktop.svg" "$data/icons/hicolor/scalable/apps/"
for size in $icon_sizes; do
  mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
  cp "$here/share/icons/hicolor/${size}x${size}/apps/weclaw-desktop.png" "$data/icons/hicolor/${size}x${size}/apps/"
done
refresh_caches

echo "Installed $version in $app_dir"
echo "  menu entry: $desktop"
echo "  command:    $bin"
case ":${PATH}:" in
  *":$prefix/bin:"*) ;;
  *) echo "  $prefix/bin is not on your PATH: add it (e.g. in ~/.profile) to run 'weclaw' from a terminal" ;;
esac
