#!/usr/bin/env python3
"""oci-image.py ROOTFS-TAR OUT-TAR REF: an OCI image archive (image-spec
image-layout, one uncompressed layer) of a root file system tar, with
index.json naming it REF ("docker.io/library/timens-bb:test"), as
`ctr images import` and `podman load` take it. No registry is reachable
here: the tests make their images from the busybox-static rootfs."""
import hashlib
import io
import json
import sys
import tarfile


def blob(tar, data, media_type):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest.split(":")[1])
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
    return {"mediaType": media_type, "digest": digest, "size": len(data)}


def main():
    rootfs, out, ref = sys.argv[1:4]
    layer = open(rootfs, "rb").read()
    with tarfile.open(out, "w") as tar:
        layer_desc = blob(tar, layer, "application/vnd.oci.image.layer.v1.tar")
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"]},
            "rootfs": {"type": "layers", "diff_ids": [layer_desc["digest"]]},
        }
        config_desc = blob(tar, json.dumps(config).encode(), "application/vnd.oci.image.config.v1+json")
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": config_desc,
            "layers": [layer_desc],
        }
        manifest_desc = blob(tar, json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")
        manifest_desc["annotations"] = {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref}
        manifest_desc["platform"] = {"architecture": "amd64", "os": "linux"}
        for name, data in (
            ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
            ("index.json", json.dumps({"schemaVersion": 2, "manifests": [manifest_desc]}).encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
