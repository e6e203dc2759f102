#!/bin/sh
# A one-monitor, one-manager Ceph cluster, bootstrapped by hand as Ceph's manual deployment
# guide does it: the shortest route to a cluster for ceph-ansible's osds play to join.
# usage: bootstrap-mon-mgr.sh CLUSTER MON_ADDRESS PUBLIC_NETWORK
# The client.bootstrap-osd key exists only in the monitor's database: ceph-osd fetches it from
# there, as it would from a monitor ceph-ansible deployed.
set -eu
cluster="$1" address="$2" network="$3"
id="$(hostname -s)"
mon_dir="/var/lib/ceph/mon/$cluster-$id" mgr_dir="/var/lib/ceph/mgr/$cluster-$id"
[ -d "$mon_dir" ] && { echo "monitor $id exists already"; exit 0; }

fsid="$(cat /proc/sys/kernel/random/uuid)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p /etc/ceph
cat > "/etc/ceph/$cluster.conf" <<CONF
[global]
fsid = $fsid
mon_initial_members = $id
mon_host = [v2:$address:3300,v1:$address:6789]
public_network = $network
CONF

ceph-authtool --create-keyring "$work/mon.keyring" --gen-key -n mon. --cap mon 'allow *'
ceph-authtool --create-keyring "/etc/ceph/$cluster.client.admin.keyring" --gen-key -n client.admin \
  --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *'
ceph-authtool --create-keyring "$work/bootstrap-osd.keyring" --gen-key -n client.bootstrap-osd \
  --cap mon 'profile bootstrap-osd' --cap mgr 'allow r'
ceph-authtool "$work/mon.keyring" --import-keyring "/etc/ceph/$cluster.client.admin.keyring"
ceph-authtool "$work/mon.keyring" --import-keyring "$work/bootstrap-osd.keyring"
monmaptool --create --addv "$id" "[v2:$address:3300,v1:$address:6789]" --fsid "$fsid" "$work/monmap"
chown -R ceph:ceph "$work"

install -d -o ceph -g ceph "$mon_dir"
runuser -u ceph -- ceph-mon --cluster "$cluster" --mkfs -i "$id" --monmap "$work/monmap" --keyring "$work/mon.keyring"
systemctl enable --now "ceph-mon@$id"

install -d -o ceph -g ceph "$mgr_dir"
ceph --cluster "$cluster" auth get-or-create "mgr.$id" mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
  -o "$mgr_dir/keyring"
chown ceph:ceph "$mgr_dir/keyring"
systemctl enable --now "ceph-mgr@$id"
# A single host: pools of one replica are the only ones that can be healthy.
ceph --cluster "$cluster" config set global mon_allow_pool_size_one true
ceph --cluster "$cluster" config set global osd_pool_default_size 1
ceph --cluster "$cluster" config set global mon_warn_on_pool_no_redundancy false
