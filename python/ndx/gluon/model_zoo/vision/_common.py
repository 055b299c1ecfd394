"""What the model constructors share: pretrained parameter files from the local store."""
from ..model_store import get_model_file


def load_pretrained(net, file_name, pretrained, root, device):
    """net with file_name's parameters from root when pretrained; net unchanged otherwise."""
    if pretrained:
        net.load_parameters(get_model_file(file_name, root=root), device=device)
    return net


def check_choice(what, value, options):
    if value not in options:
        raise ValueError(f"[model_zoo] {what} must be one of {sorted(options)}, got {value!r}")
