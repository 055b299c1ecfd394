"""Where pretrained parameter files are looked for. MXNet downloads them into
$MXNET_HOME/models (default ~/.mxnet/models) as `<name>-<hash>.params`; ndx downloads nothing
and reads a file that is already there (or `<name>.params`)."""
import glob
import os

__all__ = ["data_dir", "get_model_file", "purge"]


def data_dir():
    """$MXNET_HOME, else ~/.mxnet (MXNet's base.data_dir)."""
    return os.environ.get("MXNET_HOME", os.path.join(os.path.expanduser("~"), ".mxnet"))


def _default_root():
    return os.path.join(data_dir(), "models")


def get_model_file(name, root=None):
    """The path of model `name`'s parameter file in root: `<name>.params`, else the one
    `<name>-<hash>.params` (the newest if several). FileNotFoundError, naming the places looked
    at, when there is none: ndx has no network access at run time."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"[get_model_file] name must be a non-empty str, got {name!r}")
    root = os.path.expanduser(root if root is not None else _default_root())
    exact = os.path.join(root, name + ".params")
    if os.path.isfile(exact):
        return exact
    hashed = sorted(glob.glob(os.path.join(glob.escape(root), glob.escape(name) + "-*.params")),
                    key=os.path.getmtime)
    if hashed:
        return hashed[-1]
    raise FileNotFoundError(
        f"[get_model_file] no pretrained parameters for {name!r}: looked for {exact} and "
        f"{os.path.join(root, name + '-*.params')}. ndx downloads nothing; put MXNet's file "
        f"there (or pass root=) to use pretrained=True")


def purge(root=None):
    """Deletes the .params files in root (MXNet's model_store.purge)."""
    root = os.path.expanduser(root if root is not None else _default_root())
    for f in glob.glob(os.path.join(glob.escape(root), "*.params")):
        os.remove(f)
